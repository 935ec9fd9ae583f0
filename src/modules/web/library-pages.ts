import { esc, siteHeader, type HeaderUser } from './pages'
import type { CurrentWorkspace } from './workspace-choice'
import { LOW_CONFIDENCE } from '../../engines/llm/builtin/doubt'

const STYLES = [
  ['note', 'Note (summary and sections)'],
  ['meeting-notes', 'Meeting notes (decisions, action items)'],
  ['bulletpoints', 'Bullet points'],
  ['transcript', 'Transcript (timestamped segments)'],
] as const

function styleSelect(id: string, name = 'styleId'): string {
  return `<select id="${id}" name="${name}">${STYLES.map(([v, t]) => `<option value="${v}">${t}</option>`).join('')}</select>`
}

/** The record panel (assets/library/record.js): shown by the toolbar's Record button when the server has a live engine. */
const recorder = (worklet: string) => `<section id="recorder" class="recorder" aria-labelledby="recorder-title" data-worklet="${esc(worklet)}" hidden>
<div class="dialog-head"><h2 id="recorder-title">Record</h2><button type="button" id="close-recorder" class="secondary">Close</button></div>
<form id="record-form">
<div class="row">
<div><label for="record-style">Summary style</label>${styleSelect('record-style')}</div>
<div id="record-tab-box" hidden><span class="check"><input type="checkbox" id="record-tab-audio"><label for="record-tab-audio">Add tab/screen audio</label></span>
<p class="hint">The browser asks which tab or screen to share; tick its "Share audio" to mix that sound with the microphone.</p></div>
</div>
<p class="hint">The words appear as they are spoken. When you stop, the recording becomes a note, transcribed and summarized like an upload: one credit per started minute.</p>
<button type="submit" id="record-start" class="primary">Start recording</button>
</form>
<div id="record-live" class="record-live" hidden>
<div class="record-bar">
<span id="record-time" class="record-time">00:00</span>
<label for="record-level" class="sr-only">Sound level</label><meter id="record-level" min="0" max="1" low="0.25" high="0.9" optimum="0.5" value="0"></meter>
<div class="buttons"><button type="button" id="record-pause" aria-pressed="false">Pause</button><button type="button" id="record-stop" class="primary">Stop and make the note</button></div>
</div>
<p id="record-state" class="record-state" role="status" aria-live="polite"></p>
<div id="record-transcript" class="record-transcript" tabindex="0" role="region" aria-label="Live transcript">
<div id="record-finals" role="log" aria-live="polite" aria-label="Transcribed"></div>
<p id="record-partial" class="partial"></p>
</div>
</div>
<p id="record-message" class="error" role="alert" hidden></p>
</section>`

const UPLOAD_BUTTON = '<button type="button" id="open-upload" class="primary">Add notes…</button>'

function libraryBody(live: { worklet: string } | undefined): string {
  if (!live) return LIBRARY_BODY
  return LIBRARY_BODY
    .replace(UPLOAD_BUTTON, `<div class="toolbar-buttons"><button type="button" id="open-recorder" aria-controls="recorder" aria-expanded="false">Record…</button>${UPLOAD_BUTTON}</div>`)
    .replace('<section id="queue"', `${recorder(live.worklet)}\n<section id="queue"`)
}

const LIBRARY_BODY = `<div class="app">
<aside class="sidebar" aria-labelledby="folders-title">
<h2 id="folders-title">Folders</h2>
<ul id="folders" class="folders" aria-busy="true"></ul>
<details class="new-folder">
<summary>New folder</summary>
<form id="new-folder">
<label for="new-folder-name">Name</label>
<input id="new-folder-name" name="name" required maxlength="200" autocomplete="off">
<label for="new-folder-color">Colour</label>
<input id="new-folder-color" name="color" type="color" value="#2b59c3">
<button type="submit">Create folder</button>
</form>
</details>
<div class="switch"><input type="checkbox" id="sandbox-switch"><label for="sandbox-switch">Sandbox library</label></div>
<p class="hint">The sandbox library answers with fixed output and charges nothing.</p>
</aside>
<main id="main" tabindex="-1">
<div id="sandbox-banner" class="banner" hidden>You are in the <b>sandbox library</b>: processing gives fixed output and charges nothing.</div>
<h1 id="library-title">All notes</h1>
<div class="toolbar">
<form id="search" role="search">
<label for="q">Search notes</label>
<span class="searchrow"><input type="search" id="q" name="q" maxlength="200" placeholder="Words from titles, summaries, transcripts"><button type="submit">Search</button></span>
</form>
<div class="filters">
<label for="status-filter">Status</label>
<select id="status-filter"><option value="">Any status</option><option value="Done">Done</option><option value="Summarizing">Processing</option><option value="Error">Error</option></select>
<label for="type-filter">Type</label>
<select id="type-filter"><option value="">Any type</option><option value="audio">Audio</option><option value="video">Video</option><option value="youtube">Video link</option><option value="import">Text</option></select>
</div>
${UPLOAD_BUTTON}
</div>
<section id="queue" class="queue" aria-labelledby="queue-title" hidden>
<h2 id="queue-title">Uploads</h2>
<ul id="queue-list"></ul>
</section>
<section id="ask-library" class="card ask-library" aria-labelledby="ask-library-title"><h2 id="ask-library-title">Ask your library</h2>
<form id="ask-library-form"><label for="library-question">A question about all your notes</label><span class="searchrow"><input id="library-question" maxlength="2000" required autocomplete="off"><button type="submit">Ask (1 credit)</button></span></form>
<div id="library-answers" class="answers" aria-live="polite"></div></section>
<p id="list-status" class="list-status" role="status" aria-live="polite">Loading notes…</p>
<ul id="notes" class="notes" aria-labelledby="library-title"></ul>
<nav class="pager" aria-label="Pages of notes">
<button type="button" id="newer" disabled>← Newer</button>
<span id="page-info"></span>
<button type="button" id="older" disabled>Older →</button>
</nav>
</main>
</div>
<dialog id="upload-dialog" aria-labelledby="upload-title">
<div class="dialog-head"><h2 id="upload-title">Add notes</h2><button type="button" id="close-upload" class="secondary">Close</button></div>
<form id="upload-form">
<h3>Upload recordings</h3>
<div id="drop" class="drop">
<p>Drop audio or video files here, or</p>
<label for="files" class="filebtn">Choose files</label>
<input type="file" id="files" name="files" multiple accept="audio/*,video/*">
<p id="chosen" class="hint" aria-live="polite">No files chosen.</p>
</div>
<div class="row">
<div><label for="upload-style">Summary style</label>${styleSelect('upload-style')}</div>
<div><label for="upload-language">Language (optional)</label><input id="upload-language" name="language" maxlength="10" placeholder="auto-detect, or e.g. en" autocomplete="off"></div>
</div>
<p class="hint">One credit per started minute of each recording.</p>
<button type="submit" class="primary">Upload</button>
</form>
<form id="link-form">
<h3>Summarize a video link</h3>
<label for="link-url">Video link</label>
<input id="link-url" name="youtubeUrl" type="url" required placeholder="https://www.youtube.com/watch?v=…">
<label for="link-style">Summary style</label>${styleSelect('link-style')}
<p class="hint">One credit per started minute of the video.</p>
<button type="submit">Summarize video</button>
</form>
<form id="text-form">
<h3>Paste text</h3>
<label for="text-title">Title</label>
<input id="text-title" name="title" maxlength="500" placeholder="From the first line when empty">
<label for="text-body">Text</label>
<textarea id="text-body" name="text" rows="5" required></textarea>
<label for="text-style">Summary style (for Summarize)</label>${styleSelect('text-style')}
<div class="buttons"><button type="submit" value="note">Save as note (free)</button><button type="submit" value="summary" class="secondary">Summarize (2 credits)</button></div>
</form>
<div id="dialog-result" class="dialog-result" role="status" aria-live="polite"></div>
</dialog>`

/** The note page's share links (assets/library/share.js); left out when the instance turns sharing off. */
const SHARE_SECTION = `<details id="share" class="card share"><summary><h2 id="share-title">Share…</h2></summary>
<p class="hint">A read-only link for someone without an account: the transcript with speakers and times, and what you tick below. Nothing else of your library.</p>
<form id="share-form"><div class="checks">
<span class="check"><input type="checkbox" id="share-summary" name="showSummary" checked><label for="share-summary">Summary</label></span>
<span class="check"><input type="checkbox" id="share-speakers" name="showSpeakers"><label for="share-speakers">Speakers' names</label></span>
<span class="check"><input type="checkbox" id="share-recording" name="showRecording"><label for="share-recording">Recording</label></span>
<span class="check"><input type="checkbox" id="share-txt" name="formats" value="txt"><label for="share-txt">Download .txt</label></span>
<span class="check"><input type="checkbox" id="share-srt" name="formats" value="srt"><label for="share-srt">Download .srt</label></span>
<span class="check"><input type="checkbox" id="share-vtt" name="formats" value="vtt"><label for="share-vtt">Download .vtt</label></span></div>
<div class="row"><div><label for="share-expires">Expires</label><select id="share-expires" name="expires"><option value="0">Never</option><option value="1">In a day</option><option value="7" selected>In a week</option><option value="30">In 30 days</option></select></div>
<div><label for="share-passphrase">Passphrase (optional, 6 or more characters)</label><input id="share-passphrase" name="passphrase" type="password" minlength="6" maxlength="200" autocomplete="new-password"></div></div>
<button type="submit">Make a link</button></form>
<div id="share-created" hidden></div>
<p id="share-status" class="hint" role="status" aria-live="polite"></p>
<h3>Links</h3><ul id="share-list" class="share-list"></ul></details>`

const noteBody = (sharing: boolean) => `<main id="main" class="note-page" tabindex="-1">
<p class="back"><a href="/">← Library</a></p>
<div id="sandbox-banner" class="banner" hidden>A note of the <b>sandbox library</b>: its output is fixed and it charges nothing.</div>
<div id="note-error" class="error" role="alert" hidden></div>
<h1 id="note-title" class="note-title">Loading note…</h1>
<p id="note-meta" class="meta">&nbsp;</p>
<div class="note-actions">
<form id="rename-form"><label for="rename-input">Title</label><span class="searchrow"><input id="rename-input" maxlength="500" required><button type="submit">Rename</button></span></form>
<div><label for="move-select">Folder</label><select id="move-select"><option value="">Top level</option></select></div>
<div class="buttons"><button type="button" id="pin" aria-pressed="false">Pin</button><button type="button" id="delete" class="danger">Delete…</button></div>
</div>
<p id="action-status" class="action-status" role="status" aria-live="polite"></p>
<section id="player-section" class="card" aria-labelledby="player-title" hidden><h2 id="player-title">Recording</h2><div id="player-slot"></div></section>
<section class="card" aria-labelledby="summary-title"><h2 id="summary-title">Summary</h2>
<p id="summary-stale" class="stale" hidden>The transcript changed after this summary was made. Summarize again to bring it up to date.</p>
<div id="summary" class="summary"><p class="placeholder">Loading…</p></div>
<form id="resummarize" class="resummarize" hidden><label for="resummarize-style">Summary style</label><span class="searchrow">${styleSelect('resummarize-style')}<button type="submit" id="resummarize-go">Summarize again</button></span>
<p id="resummarize-status" class="hint" role="status" aria-live="polite"></p></form></section>
<section class="card" aria-labelledby="transcript-title"><h2 id="transcript-title">Transcript</h2>
<div id="exports" class="exports"></div>
<div id="transcript-tools" class="transcript-tools" hidden>
<div class="buttons"><button type="button" id="undo" class="secondary" disabled aria-keyshortcuts="Control+Z">Undo</button><button type="button" id="redo" class="secondary" disabled aria-keyshortcuts="Control+Shift+Z">Redo</button></div>
<p id="edit-help" class="hint">Click a segment's text, or press Enter on it, to correct it: Enter saves, Escape cancels. Click a word to play from it. Words the engine was unsure of are underlined with dots.</p>
<details id="history" class="history"><summary>History</summary><ol id="revisions" class="revisions"></ol></details>
<details id="find-replace" class="find-replace"><summary>Find and replace</summary>
<form id="find-form"><div class="row"><div><label for="find-text">Find</label><input id="find-text" maxlength="1000" required autocomplete="off"></div>
<div><label for="replace-text">Replace with</label><input id="replace-text" maxlength="10000" autocomplete="off"></div></div>
<div class="checks"><span class="check"><input type="checkbox" id="match-case"><label for="match-case">Match case</label></span><span class="check"><input type="checkbox" id="whole-word" checked><label for="whole-word">Whole words</label></span><button type="submit">Preview</button></div></form>
<div id="replace-preview" hidden><p id="replace-summary" role="status" aria-live="polite"></p><ul id="replace-matches" class="replace-matches"></ul>
<div id="replace-apply" class="buttons"><button type="button" id="replace-all" class="primary">Replace all</button><button type="button" id="replace-chosen" class="secondary">Replace chosen</button></div></div>
</details>
<div id="suggestions" class="suggestions" hidden></div>
</div>
<div id="speaker-tools" class="speaker-tools" hidden><div id="speaker-filter-box" class="speaker-filter"></div><p id="speaker-shown" class="hint" role="status" aria-live="polite"></p></div>
<ol id="segments" class="segments"></ol></section>
${sharing ? SHARE_SECTION : ''}
<section class="card" aria-labelledby="ask-title"><h2 id="ask-title">Ask a question</h2>
<form id="ask-form"><label for="question">Question about this note</label><span class="searchrow"><input id="question" maxlength="2000" required autocomplete="off"><button type="submit">Ask (1 credit)</button></span></form>
<div id="answers" class="answers" aria-live="polite"></div></section>
<section class="card" aria-labelledby="cost-title"><h2 id="cost-title">Credits</h2><p id="note-cost">&nbsp;</p></section>
</main>
<dialog id="confirm-dialog" aria-labelledby="confirm-title"><h2 id="confirm-title">Delete this note?</h2><p>The note, its transcript and its recording are deleted for good.</p>
<div class="buttons"><button type="button" id="confirm-delete" class="danger">Delete</button><button type="button" id="cancel-delete" class="secondary" autofocus>Keep it</button></div></dialog>`

/** The pages the library's script fills in; `workspace` and `invitation` bring their own main part (./workspace-pages.ts). */
export type ShellView = 'library' | 'note' | 'workspace' | 'invitation'
const TITLES: Record<ShellView, string> = { library: 'Library', note: 'Note', workspace: 'Workspace', invitation: 'Invitation' }

/**
 * The library (`/`), a note's page (`/notes/:id`), the workspace page and an invitation's: the shell
 * the library's script fills in, drawn in the current workspace, which the script sends with every
 * call (the meta tag) and whose role the page hides write controls for (`data-role`; the API's 403 is
 * the real gate).
 */
export function libraryShell(o: { view: ShellView; user: HeaderUser; balance: number | null; noteId?: string; assets: { script: string; style: string }; live?: { worklet: string }; sharing?: boolean; workspace: CurrentWorkspace; main?: string }): string {
  // the confidence under which the page marks a word as doubtful: the builtin summarizer's (doubt.ts)
  const w = o.workspace.current
  const body = o.view === 'library' ? libraryBody(o.live) : o.view === 'note' ? noteBody(o.sharing !== false) : (o.main ?? '')
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="csrf-token" content="${esc(o.user.csrf)}">
<meta name="notesvc-workspace" content="${esc(w.id)}">
<title>${TITLES[o.view]} · notesvc</title>
<link rel="stylesheet" href="${esc(o.assets.style)}">
<script type="module" src="${esc(o.assets.script)}"></script>
</head>
<body data-view="${o.view}" data-note-id="${esc(o.noteId ?? '')}" data-low-confidence="${LOW_CONFIDENCE}" data-role="${esc(w.role)}" data-workspace-kind="${w.kind}" data-workspace-name="${esc(w.name)}">
<a class="skip" href="#main">Skip to the content</a>
${siteHeader({ user: o.user, balance: o.balance, current: o.view === 'workspace' ? 'workspace' : 'library', workspace: o.workspace })}
${body}
</body>
</html>`
}
