"""The sweep's answer shipped: ``<out>/recommended/`` written as a deployment (:mod:`.deployment`), then re-loaded by a
fresh agent and checked against what the sweep measured (:mod:`.check`).
"""
