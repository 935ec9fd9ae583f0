import { escapeHtml as esc } from '../../http/html'
import { ANSWER_HEADERS } from '../../http/security-headers'
import { displayName, namedSegments } from '../../transcript/transcript'
import css from './assets/share.css' with { type: 'text' }
import script from './assets/share.js' with { type: 'text' }
import type { SharedNote } from './service'

const version = (text: string) => Bun.hash(text).toString(36)
/** The page's own stylesheet and script, embedded in the binary and served from this server (the CSP allows nothing else). */
export const SHARE_ASSETS = {
  style: { path: '/assets/share.css', body: css, type: 'text/css; charset=utf-8', v: version(css) },
  script: { path: '/assets/share.js', body: script, type: 'text/javascript; charset=utf-8', v: version(script) },
}

/**
 * What every answer of a share link carries: never indexed, never cached, framed or sniffed, no
 * Referer to anywhere (the token is in the URL), scripts and styles only from this server's two
 * files, media only from this server; never a cookie.
 */
export const SHARE_HEADERS: Record<string, string> = {
  ...ANSWER_HEADERS,
  'x-robots-tag': 'noindex, nofollow, noarchive',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; media-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow, noarchive">
<meta name="referrer" content="no-referrer">
<title>${esc(title)}</title>
<link rel="stylesheet" href="${SHARE_ASSETS.style.path}?v=${SHARE_ASSETS.style.v}">
<script type="module" src="${SHARE_ASSETS.script.path}?v=${SHARE_ASSETS.script.v}"></script>
</head>
<body>
<header>Shared note</header>
<main>
${body}
</main>
</body>
</html>`
}

/**
 * The one page of every link that does not open: unknown, revoked, expired, its note deleted or not
 * readable, sharing turned off. A constant, so no answer tells these apart.
 */
export const NOT_FOUND_PAGE = layout('Link not available', `<section class="narrow"><h1>This link is not available</h1>
<p>The link may be mistyped, or its owner may have revoked it or let it expire. Ask whoever sent it for a new one.</p></section>`)

export function passphrasePage(o: { action: string; error?: string }): string {
  return layout('Passphrase needed', `<section class="narrow"><h1>Passphrase needed</h1>
<p>Whoever shared this note protected it with a passphrase. Enter it to open the note.</p>
${o.error ? `<p class="error" role="alert">${esc(o.error)}</p>` : ''}
<form method="post" action="${esc(o.action)}">
<label for="passphrase">Passphrase</label>
<input type="password" id="passphrase" name="passphrase" required maxlength="200" autocomplete="off" autofocus>
<button type="submit">Open the note</button>
</form></section>`)
}

/** `h:mm:ss` or `m:ss` */
function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds))
  const hms = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60]
  return hms[0] ? `${hms[0]}:${String(hms[1]).padStart(2, '0')}:${String(hms[2]).padStart(2, '0')}` : `${hms[1]}:${String(hms[2]).padStart(2, '0')}`
}

function transcriptBody(n: SharedNote, seekable: boolean): string {
  const segments = namedSegments(n.transcript)
  if (!segments) return `<div class="plain">${esc(n.transcript.text)}</div>`
  const items = segments.map(s => {
    const time = seekable
      ? `<button type="button" class="time" data-start="${Number(s.start)}" aria-label="Play from ${clock(s.start)}">${clock(s.start)}</button>`
      : `<span class="time">${clock(s.start)}</span>`
    const speaker = s.speaker ? `<span class="speaker">${esc(s.speaker)}</span>` : ''
    return `<li>${time}${speaker}<span class="text">${esc(s.text)}</span></li>`
  })
  return `<ol class="segments">${items.join('')}</ol>`
}

/** The player: the recording through the link, or the usual message when retention removed it. */
function playerSection(n: SharedNote, media: { src: string; contentType: string } | null): string {
  if (!n.share.showRecording) return ''
  if (n.mediaRemovedAt) {
    return `<section aria-labelledby="player-title"><h2 id="player-title">Recording</h2><p id="media-removed" class="hint">The recording was removed by the retention policy on ${esc(n.mediaRemovedAt.slice(0, 10))}. The transcript and summary are kept.</p></section>`
  }
  if (!media) return ''
  const tag = media.contentType.startsWith('video/') ? 'video' : 'audio'
  return `<section aria-labelledby="player-title"><h2 id="player-title">Recording</h2><${tag} id="player" controls preload="metadata" src="${esc(media.src)}"></${tag}></section>`
}

/** The shared note's page: title, player, summary, transcript, downloads; nothing else of the library. */
export function sharedNotePage(n: SharedNote, o: { base: string; proof: string | null; media: { contentType: string } | null }): string {
  const q = o.proof ? `?k=${encodeURIComponent(o.proof)}` : ''
  const media = o.media ? { src: `${o.base}/media${q}`, contentType: o.media.contentType } : null
  const speakers = n.transcript.speakers.map(s => displayName(s.label, s.name))
  const downloads = n.share.formats.map(f => `<li><a href="${esc(`${o.base}/transcript.${f}${q}`)}" download>Transcript (.${f})</a></li>`)
  return layout(n.title, `<h1 id="note-title">${esc(n.title)}</h1>
${speakers.length ? `<p class="meta">Speakers: ${speakers.map(esc).join(', ')}</p>` : ''}
${playerSection(n, media)}
${n.summary !== null ? `<section aria-labelledby="summary-title"><h2 id="summary-title">Summary</h2><div id="summary" class="summary">${esc(n.summary)}</div></section>` : ''}
<section aria-labelledby="transcript-title"><h2 id="transcript-title">Transcript</h2>
${downloads.length ? `<ul class="downloads">${downloads.join('')}</ul>` : ''}
<div id="transcript">${transcriptBody(n, media !== null)}</div></section>`)
}
