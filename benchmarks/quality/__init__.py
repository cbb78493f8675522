"""Answer quality and speed of the search, measured and tuned offline from a checkout.

``python -m benchmarks.quality eval`` scores the eval and held-out question sets, refits the fusion weights
and cross-validates them; ``python -m benchmarks.quality bench`` times searches and builds and measures
memory. Nothing in the runtime packages imports this: the fitted weights are copied into
``index.query.ranking`` (a test checks they equal the fit).
"""
