"""An lm-evaluation-harness task for every built benchmark (`pip install "tipqa[lm-eval]"`).

A build writes `lm_eval_tasks/` into the Hub-ready folder (`outputs/<run>/hub`) and into the
splits folder (`outputs/<run>/splits`): `tip_triviaqa` (the test split, the paper's answer
prompt, greedy until a new line, tipqa's metrics), and with a `[training_order]` one task per
checkpoint, `tip_triviaqa_step<N>`, grouped as `tip_triviaqa_checkpoints` (Hub folder only).
From a published folder to a table:

    pip install "tipqa[lm-eval]"
    hf download <user>/<name> --repo-type dataset --local-dir tip
    lm_eval --model hf --model_args pretrained=EleutherAI/pythia-1b \\
      --tasks tip_triviaqa,tip_triviaqa_checkpoints --include_path tip/lm_eval_tasks \\
      --log_samples --output_path results
    python -m tipqa.lmeval_task predictions results/*/samples_tip_triviaqa_*.jsonl preds.jsonl
    python -m tipqa.evaluate tip preds.jsonl --out report

lm-eval prints the table (EM-F1, PM-F1, precision, recall, accuracy and refusal rates on
answerable and unanswerable questions); the last two lines give tipqa's full report on the same
answers, with the same numbers. Modules: `task_files` (the folder's YAML and `utils.py`),
`hooks` (what `utils.py` calls), `samples` (lm-eval's samples as predictions).
"""
