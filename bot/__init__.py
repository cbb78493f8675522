"""The Discord bot and its console front end."""
