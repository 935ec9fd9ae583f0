// The library's record button (docs/usage.md "Recording in the browser"): the microphone (and a tab's
// sound) captured (record-audio.js), streamed live (record-stream.js), the words shown as they are
// heard (a turn's words grey and italic while the engine may still revise them, then set; only set
// words are announced), pause and resume, and on stop the note's page, which follows its processing.
import { $, clock, el } from './dom.js'
import { canShareTabAudio, startCapture } from './record-audio.js'
import { openLiveStream } from './record-stream.js'

/** the recording under way: { capture, stream, paused, ending } */
let current = null
/** each unfinished turn's text so far, by item id, in order */
const partials = new Map()

const say = text => { $('record-state').textContent = text }

function problem(text, noteId) {
  const box = $('record-message')
  box.replaceChildren(text, ...(noteId ? [' ', el('a', { href: `/notes/${encodeURIComponent(noteId)}`, text: 'Open the note' })] : []))
  box.hidden = false
}

function clearProblem() {
  $('record-message').hidden = true
  $('record-message').replaceChildren()
}

/** Keeps the newest words in view, unless the reader scrolled up to read. */
function showWords(change) {
  const box = $('record-transcript')
  const atEnd = box.scrollHeight - box.scrollTop - box.clientHeight < 40
  change()
  const partial = [...partials.values()].join(' ').trim()
  $('record-partial').textContent = partial || ($('record-finals').childNodes.length ? '' : 'Words appear here as they are spoken.')
  $('record-partial').classList.toggle('waiting', !partial)
  if (atEnd) box.scrollTop = box.scrollHeight
}

function setView(recording) {
  $('record-form').hidden = recording
  $('record-live').hidden = !recording
  $('close-recorder').hidden = recording
}

/** Ends the recording on the page (the capture released); `why` shown when it did not end in a note. */
async function endHere(why, noteId) {
  const r = current
  current = null
  if (r) {
    r.stream.close()
    await r.capture.stop()
  }
  if (why) {
    problem(why, noteId)
    say('Stopped.')
    setView(false)
    $('record-start').textContent = 'Start a new recording'
  }
}

function streamEvents() {
  let lastError = null
  return {
    partial(item, text) { showWords(() => partials.set(item, text)) },
    completed(item, text) {
      showWords(() => {
        partials.delete(item)
        if (text.trim()) $('record-finals').append(el('p', { text: text.trim() }))
      })
    },
    error(error) {
      lastError = error
      if (error.code === 'insufficient_credits') {
        say('Making the note…')
        problem('Your credits ran out, so the recording stopped. The note is made from what was said until then.')
        if (current) { current.ending = true; current.capture.stop() }
      }
    },
    ready() { say(current && current.paused ? 'Paused: nothing is sent until you resume.' : 'Recording') },
    lost() { say('Connection lost: reconnecting… The recording goes on and is sent when the connection is back.') },
    back() {
      // the server goes on from what it kept: unfinished turns are heard again
      showWords(() => partials.clear())
      say(current && current.ending ? 'Connected again: making the note…' : 'Connected again: the audio recorded meanwhile was sent. Recording')
    },
    gaveUp(stream) {
      endHere(`The connection could not be restored within ${stream.resume_seconds} seconds, so the recording stopped. The note is made from the audio the server received.`, stream.note_id)
    },
    ended(code) {
      const stream = current && current.stream.stream()
      if (code === 0) return endHere('The live stream could not be started: the server refused it or could not be reached (too many recordings at once, or your session ended). Wait a few seconds and press Start recording again; reload the page if it keeps failing.')
      const why = lastError ? lastError.message : code === 1006 ? 'The connection was lost and this server cannot resume a stream.' : 'The server ended the stream.'
      endHere(stream ? `${why} The note is made from what the server received.` : `${why} Start a new recording.`, stream && stream.note_id)
    },
    finished(event) {
      say('The note is made: opening it…')
      const note = event.note
      if (current) current.stream.close()
      current = null
      window.location.assign(`/notes/${encodeURIComponent(note.id)}`)
    },
  }
}

async function start(e) {
  e.preventDefault()
  if (current) return
  clearProblem()
  partials.clear()
  $('record-finals').replaceChildren()
  showWords(() => {})
  $('record-start').disabled = true
  say('Starting the microphone…')
  const events = streamEvents()
  let stream = null
  let capture
  try {
    capture = await startCapture({
      withTabAudio: $('record-tab-audio').checked,
      workletUrl: $('recorder').dataset.worklet,
      note: text => problem(text),
      onChunk: (pcm, level) => {
        if (!current || current.paused || current.ending) { $('record-level').value = 0; return }
        stream.push(pcm)
        $('record-level').value = level
        $('record-time').textContent = clock(stream.seconds())
      },
    })
  } catch (err) {
    $('record-start').disabled = false
    say('')
    problem(err.message)
    return
  }
  $('record-start').disabled = false
  stream = openLiveStream({ style: $('record-style').value, on: events })
  current = { capture, stream, paused: false, ending: false }
  $('record-time').textContent = clock(0)
  $('record-pause').textContent = 'Pause'
  $('record-pause').setAttribute('aria-pressed', 'false')
  $('record-pause').disabled = false
  $('record-stop').disabled = false
  setView(true)
  say('Connecting…')
  $('record-stop').focus()
}

function togglePause() {
  if (!current || current.ending) return
  current.paused = !current.paused
  $('record-pause').textContent = current.paused ? 'Resume' : 'Pause'
  $('record-pause').setAttribute('aria-pressed', String(current.paused))
  say(current.paused ? 'Paused: nothing is sent until you resume.' : 'Recording')
}

async function stop() {
  if (!current || current.ending) return
  const r = current
  r.ending = true
  $('record-pause').disabled = true
  $('record-stop').disabled = true
  say('Making the note…')
  await r.capture.stop()
  r.stream.finish()
}

export function initRecorder() {
  const open = $('open-recorder')
  if (!open) return
  open.addEventListener('click', () => {
    $('recorder').hidden = false
    open.setAttribute('aria-expanded', 'true')
    $('record-start').focus()
  })
  $('close-recorder').addEventListener('click', () => {
    if (current) return
    $('recorder').hidden = true
    open.setAttribute('aria-expanded', 'false')
    open.focus()
  })
  $('record-tab-box').hidden = !canShareTabAudio()
  $('record-form').addEventListener('submit', start)
  $('record-pause').addEventListener('click', togglePause)
  $('record-stop').addEventListener('click', stop)
  // leaving the page ends the recording: the browser asks first
  window.addEventListener('beforeunload', e => { if (current) { e.preventDefault(); e.returnValue = '' } })
}
