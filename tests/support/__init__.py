"""The tests' helpers (imported as `support.<module>`; pyproject puts tests/ on the path).

- Local servers at the test edges: `openai_server` (OpenAI-compatible chat API), `fallible_judge`
  (a right and a fallible judge behind it), `fake_hub` (the Hugging Face Hub API),
  `fake_elasticsearch` (a recording Elasticsearch node), `label_studio_server` (a real Label
  Studio from its own venv).
- Browsers for the explorer page: `webdriver` (Chromium through chromedriver), `bidi` (Firefox
  over WebDriver BiDi), `explorer_support` (synthetic finished builds).
- Tiny models: `vllm_model` (a random-weight chat model), `lmeval_model` (one that refuses some
  prompts), `vllm_fixtures` (the vLLM engine's fixtures, imported by conftest.py).
- Builds: `tests_support` (the real `luigi` command on the small demo world), `seed_support` (that
  world and its indexes built once per session), `offline_support` (a fresh offline Python).
- Authored worlds and data: `audit_support`, `judge_audit_support`, `annotation_support`,
  `contract_support`, `croissant_support`, `evaluate_support`, `partition_fixtures`,
  `plan_support`, `ranking_support`, `vector_support`, `judge_support`; `token_oracle` (the token
  query's definition by brute force).
- Documentation checks: `docs_check` (the docs' commands and configurations), `docstring_check`
  (dotted names that name nothing any more).
"""
