/** What a live recognizer (index.ts) tells its listeners; the thread (session.ts) makes them. */
export interface LiveWord {
  word: string
  /** seconds from the stream's first sample */
  start: number
  end: number
  /** posterior probability, 0 to 1 */
  confidence: number
}

export type LiveEvent =
  /** the decoder is loaded (about 1.3 s after opening; audio pushed before it waits, then is decoded) */
  | { type: 'ready' }
  /** speech began: utterance `item` starts */
  | { type: 'speechStarted'; item: number; audioStartMs: number }
  | { type: 'speechStopped'; item: number; audioEndMs: number }
  /** what is heard so far in utterance `item` (0, 1, …): provisional, each replaces the last */
  | { type: 'partial'; item: number; text: string }
  /** utterance `item` ended: its text (may be empty: noise, no words) and words */
  | { type: 'final'; item: number; text: string; start: number; end: number; words: LiveWord[] }
  /** decoding failed (e.g. PocketSphinx missing); the recognizer ignores later audio */
  | { type: 'error'; message: string }
