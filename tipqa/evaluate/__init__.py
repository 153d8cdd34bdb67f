"""The benchmark's scorer: EM-F1 and PM-F1 with refusal detection, confidence measures, tests.

Usable without Luigi:

    python -m tipqa.evaluate GOLD PREDICTIONS [--out DIR] [--split test] [--allow-missing]
    python -m tipqa.evaluate compare GOLD PRED_A PRED_B ... [--trials N] [--seed S]

GOLD is a split folder (`outputs/<run>/splits/test`), the splits or run folder, the Hub-ready
folder (`outputs/<run>/hub`), each with `--split`, or a Hub dataset id. In a build, `luigi
--module pipelines Evaluate --model-backend openai --split test` makes a model's predictions
and scores them (`step`). The modules: `gold` and `predictions` (reading, checks),
`matching` (normalisation, EM, token F1), `refusal`, `metrics`, `calibration`, `bootstrap`,
`significance`, `breakdown`, `score` (putting it together), `report` and `figures`; `answerers`
and `predict` produce predictions with a real model, `pipeline` and `step` run it all, and
`settings` is the `[evaluate]` section.
"""
