#!/usr/bin/env bash
# Writes docs/examples/hello.wav, the recording the README's walk-through uploads: a few seconds of
# English speech made with espeak-ng (apt-get install espeak-ng ffmpeg), 16 kHz mono 16-bit PCM, so the
# server reads it without ffmpeg and any speech engine hears it. Run it again only to change the words.
set -euo pipefail
cd "$(dirname "$0")/.."
text="Hello and welcome. The budget meeting is on Monday morning. Please bring the report."
tmp=$(mktemp --suffix .wav)
espeak-ng -v en-us -s 140 -w "$tmp" "$text"
ffmpeg -loglevel error -y -i "$tmp" -ar 16000 -ac 1 -c:a pcm_s16le -map_metadata -1 -fflags +bitexact docs/examples/hello.wav
rm -f "$tmp"
ls -l docs/examples/hello.wav
