"""Models under evaluation: the paper's answer prompt on an OpenAI-compatible server or vLLM.

Each backend's settings are the `[evaluate.<backend>]` config section; `Evaluate
--model-backend <backend>` picks one. The seam and its registry are in `base.py`.
"""
