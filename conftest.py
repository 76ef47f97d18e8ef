"""Collection rules for the package's doctests."""

import importlib.util

# The Flower apps import flwr when imported: without the optional extra there is nothing to run.
collect_ignore = [] if importlib.util.find_spec("flwr") else [
    "fedsearch/federation/_flower_server.py", "fedsearch/party/_flower_client.py"]
