/**
 * The engine's turns as OpenAI's server events: each turn (numbered by the engine) gets an item id when
 * first heard of; speech_started/stopped, committed (once per turn: after speech_stopped, or before the
 * completed of a turn the client committed), the deltas and the completed transcript.
 *
 * Every partial goes whole as notesvc's own event. Deltas (OpenAI's, appended text that cannot be taken
 * back) carry only words two partials in a row agree on (LocalAgreement-2, as whisper_streaming commits):
 * the engine's first guess at a turn's opening word is often revised a moment later, and a delta sent
 * for it would stop every later delta of the turn (they must extend what was sent). The final's rest
 * goes as a last delta, so the deltas join into the transcript when the final extends them.
 */
import type { NextId, serverEvents } from './protocol'
import type { RecognizerEvent } from './recognizer'

/** the words two hypotheses begin with alike */
function agreedWords(a: string, b: string): string {
  const x = a.split(' ').filter(Boolean)
  const y = b.split(' ').filter(Boolean)
  let n = 0
  while (n < x.length && n < y.length && x[n] === y[n]) n++
  return y.slice(0, n).join(' ')
}

/** `text` past `before`, when it extends it at a word's end; null otherwise */
function extension(before: string, text: string): string | null {
  if (text.length <= before.length) return null
  if (before === '') return text
  return text.startsWith(`${before} `) ? text.slice(before.length) : null
}

type TurnEvent = Exclude<RecognizerEvent, { kind: 'failed' }>

export function createTurnEvents(events: ReturnType<typeof serverEvents>, nextId: NextId, send: (event: { type: string }) => void) {
  const items = new Map<number, string>()
  const committed = new Set<number>()
  let previous: string | null = null
  /** the text each turn's deltas have sent so far, and its last partial */
  const sent = new Map<number, string>()
  const lastPartial = new Map<number, string>()

  const itemOf = (turn: number) => {
    let id = items.get(turn)
    if (!id) items.set(turn, (id = nextId('item')))
    return id
  }
  function commit(turn: number) {
    if (committed.has(turn)) return
    committed.add(turn)
    const item = itemOf(turn)
    send(events.committed(item, previous))
    previous = item
  }
  function delta(turn: number, text: string) {
    const more = extension(sent.get(turn) ?? '', text)
    if (more === null) return
    sent.set(turn, text)
    send(events.delta(itemOf(turn), more))
  }

  return {
    event(e: TurnEvent) {
      switch (e.kind) {
        case 'speech_started':
          return send(events.speechStarted(itemOf(e.turn), e.at * 1000))
        case 'speech_stopped':
          send(events.speechStopped(itemOf(e.turn), e.at * 1000))
          return commit(e.turn)
        case 'partial': {
          send(events.partial(itemOf(e.turn), e.text))
          const agreed = agreedWords(lastPartial.get(e.turn) ?? '', e.text)
          lastPartial.set(e.turn, e.text)
          return delta(e.turn, agreed)
        }
        case 'final':
          commit(e.turn)
          delta(e.turn, e.text)
          sent.delete(e.turn)
          lastPartial.delete(e.turn)
          return send(events.completed(itemOf(e.turn), e.text, Math.max(0, e.end - e.start)))
      }
    },
  }
}
