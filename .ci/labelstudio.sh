#!/usr/bin/env bash
# The Label Studio, LibreOffice and browser tests (markers labelstudio, libreoffice, chromium,
# firefox). Label Studio goes into its own venv (.venv-labelstudio: it pulls Django and many
# packages that must stay out of .venv); headless Chromium and chromedriver render the labelling
# page and the explorer page (tipqa.report.explorer), headless Firefox ESR the explorer page too
# (driven over WebDriver BiDi, no geckodriver);
# LibreOffice Calc opens and saves the annotators' sheets. Needs .venv with the labelstudio
# extra (.ci/run makes it). The tests start Label Studio listening on 127.0.0.1 only
# (--internal-host: its default is 0.0.0.0) and stop it after.
set -euo pipefail
cd "$(dirname "$0")/.."

export HF_HUB_OFFLINE=1 PIP_DISABLE_PIP_VERSION_CHECK=1
LABEL_STUDIO_VERSION=1.23.2

missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
command -v firefox-esr >/dev/null || command -v firefox >/dev/null || missing+=(firefox-esr)
command -v soffice >/dev/null || missing+=(libreoffice-calc)
if ((${#missing[@]})) && command -v apt-get >/dev/null; then
  start=$SECONDS
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}") >/dev/null 2>&1 \
    || echo "could not install ${missing[*]}: the tests that need them will skip"
  echo "apt-get install ${missing[*]}: $((SECONDS - start)) s"
fi

start=$SECONDS
installed=$(.venv-labelstudio/bin/python -c \
  "import importlib.metadata as m; print(m.version('label-studio'))" 2>/dev/null || true)
if [ "$installed" != "$LABEL_STUDIO_VERSION" ]; then
  python3 -m venv .venv-labelstudio
  .venv-labelstudio/bin/pip install --quiet --upgrade pip
  .venv-labelstudio/bin/pip install --quiet "label-studio==$LABEL_STUDIO_VERSION"
fi
echo "Label Studio $LABEL_STUDIO_VERSION venv: $((SECONDS - start)) s"

# The first test's setup time in --durations is Label Studio's start (migrations included).
TIPQA_LABEL_STUDIO_VENV="$PWD/.venv-labelstudio" \
  .venv/bin/python -m pytest -m "labelstudio or libreoffice or chromium or firefox" -p no:cacheprovider \
  --durations=5
