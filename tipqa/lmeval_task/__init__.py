"""An lm-evaluation-harness task for every built benchmark (`pip install -e ".[lm-eval]"`).

A build writes `lm_eval_tasks/` into the Hub-ready folder (`outputs/<run>/hub`) and into the
splits folder (`outputs/<run>/splits`): `tip_triviaqa` (the test split, the paper's answer
prompt, greedy until a new line, tipqa's metrics), and with a `[training_order]` one task per
checkpoint, `tip_triviaqa_step<N>`, grouped as `tip_triviaqa_checkpoints` (Hub folder only).
From a published folder to a table:

    pip install -e ".[lm-eval]"      # in a clone of tipqa's repository (on no package index)
    hf download <user>/<name> --repo-type dataset --local-dir tip
    lm_eval --model hf --model_args pretrained=EleutherAI/pythia-1b \\
      --tasks tip_triviaqa --include_path tip/lm_eval_tasks \\
      --log_samples --output_path results
    python -m tipqa.lmeval_task predictions \\
      "$(ls -t results/*/samples_tip_triviaqa_2*.jsonl | head -n 1)" preds.jsonl
    python -m tipqa.evaluate tip preds.jsonl --out report

lm-eval prints the table (EM-F1, PM-F1, precision, recall, accuracy and refusal rates on
answerable and unanswerable questions); the last two lines give tipqa's full report on the same
answers, with the same numbers. `--tasks tip_triviaqa,tip_triviaqa_checkpoints` adds the
checkpoints where the build had a `[training_order]`; lm-eval writes one
`samples_<task>_<time>.jsonl` per task and run (the timestamp starts with the year, so
`samples_tip_triviaqa_2*` leaves the `_step<N>` tasks out), and `predictions` reads one.
Modules: `task_files` (the folder's YAML and `utils.py`), `hooks` (what `utils.py` calls),
`samples` (lm-eval's samples as predictions).
"""
