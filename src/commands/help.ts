import { VERSION } from '../version'
import { commandName } from '../command-name'
import { out } from './command'

/** `help` (or --help with any command): the commands and their flags. */
export async function helpCommand(): Promise<number> {
  out(usage())
  return 0
}

const usage = () => `notesvc ${VERSION}: transcripts and summaries of audio, video and video links, self-hosted.

Usage: ${commandName()} <command> [flags]

  serve                                   start the HTTP server and NOTESVC_WORKERS job workers (the
                                          default command; NOTESVC_WORKERS=0: the API alone)
  worker                                  run NOTESVC_WORKERS job workers (default 1) and no HTTP server,
                                          beside a serve on the same data folder; stops on SIGTERM
  keys create --email E [--plan free|pro] [--sandbox] [--scopes s1,s2] [--name N]
                                          create an API key (and the account if new); prints the key
  keys list --email E                     list an account's keys
  keys revoke <key-id-or-start>           revoke a key at once
  accounts credit --email E --credits N   add N prepaid credits
  accounts plan --email E --plan free|pro set the account's plan
  audit export [--email E] [--since D]    the audit log as JSON lines on stdout, oldest first: one
                                          account's, or every account's without --email; events at or
                                          after D (2026-11-01 or an ISO date-time); counts on stderr
  accounts password --email E [--password-stdin]
                                          set the password for signing in to the settings page (and
                                          create the account if new); reads it from stdin, or asks
                                          for it without echo on a terminal
  transcribe FILE [--format txt|srt|vtt|json] [--summary] [--style S] [--language L]
                                          transcribe a local audio or video file with the server's
                                          engines, no server or database needed: the result on stdout
                                          (default txt), progress on stderr; --summary adds a summary
                                          (txt, json), in style S (note, bulletpoints, meeting-notes,
                                          transcript; default note; --style alone implies --summary)
  transcribe --live [--device D] | --realtime FILE [--pace N]  [--url URL] [--style S] [--title T] [--language L]
                                          a live stream to a server (key in NOTESVC_KEY): the microphone
                                          through ffmpeg (PulseAudio, else ALSA; --device pulse:SOURCE or
                                          alsa:DEVICE), or FILE fed at real time (N times faster with
                                          --pace); final lines with their times on stdout, partials on
                                          stderr; Ctrl+C ends the stream and prints the note
  models list                             list the Whisper models in the models folder (and the
                                          diarization models, when present)
  models pull <name>                      download a Whisper model (tiny, base.en, small, …), resumable;
                                          \`models pull diarization\`: sherpa-onnx's two diarization models
  models import FILE [--name N]           copy a model file brought from another machine into the models
                                          folder, once checked. A Whisper ggml file (ggml-base.en.bin, or
                                          --name base.en): read through, loaded by whisper.cpp, its SHA-1
                                          compared with whisper.cpp's list. A diarization .onnx file
                                          (--name segmentation|embedding, else read from its metadata)
  retention sweep                         run one retention sweep now (what NOTESVC_RETENTION_* and each
                                          account's policy delete), progress on stderr, a summary line
  db copy --to postgres://…               copy this data folder's SQLite database into an empty
                                          PostgreSQL database and check the copy (stop serve first)
  backup DEST                             copy the database (and, with disk storage, its media) into
                                          the new or empty folder DEST, safe while serve runs, with a
                                          manifest of SHA-256 checksums; PostgreSQL: pg_dump on PATH
  backup --verify SRC                     check a backup against its manifest, changing nothing
  restore SRC                             restore a backup into an empty data folder (or an empty
                                          PostgreSQL database), after checking every checksum
  doctor                                  check what is ready and what is missing
  version                                 print the version

Configuration comes from environment variables (see docs/configuration.md); a flag of the same name in kebab
case overrides one, e.g. --port 9000 or --data-dir /srv/notesvc.`
