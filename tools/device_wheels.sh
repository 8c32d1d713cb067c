# Sourced by the device scripts: installs the wheels prepared in
# ${GPU_DIR:-.gpu}/wheels (tools/prepare_gpu_pretraining.py) into /tmp/site
# and puts it first on PYTHONPATH, beside the repository itself.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site "${GPU_DIR:-.gpu}"/wheels/*.whl || return
export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
