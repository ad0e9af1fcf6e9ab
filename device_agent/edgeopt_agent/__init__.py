"""edgeopt's stand-alone device agent.

Runs on the device (or locally as a subprocess): loads a model with one runtime, times it, and returns raw
measurements as JSON. Standard library + numpy + the runtime it loads; Python 3.8+; never imports edgeopt.
"""

__version__ = "0.1.0"
