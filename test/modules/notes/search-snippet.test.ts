import { afterAll, describe, expect, test } from 'bun:test'
import { openDatabase } from '../../../src/db/database'
import { anchorSpellings, snippetOf, tokenize } from '../../../src/modules/notes/search-snippet'

/**
 * The snippet of a search result on SQLite, made by search-snippet.ts from a bounded window of each
 * column (FTS5's snippet() costs n² in the matches of a note). What it must agree with is FTS5 itself:
 * the words are checked against the words the index (migration 9's note_search, its unicode61
 * tokenizer) holds for the same text, and the snippets of small notes against what snippet() makes of
 * them; windows cut out of longer text are checked against snippets written here.
 */

const db = openDatabase(':memory:')
afterAll(() => db.close())
db.exec("CREATE VIRTUAL TABLE temp.note_words USING fts5vocab(main, note_search, 'instance')")
let rowid = 0

/** Indexes a note's text in the real search table (as its triggers do) and returns its rowid. */
function index(title: string, summary = '', transcript = ''): number {
  db.query('INSERT INTO note_search (rowid, title, summary, transcript) VALUES (?, ?, ?, ?)').run(++rowid, title, summary, transcript)
  return rowid
}

describe('words: as the index cuts and folds them', () => {
  const TEXTS = [
    'The Budget, budgets and BUDGETED: re-budgeting (budget_2026) in Q3/Q4.',
    'Réunion au CAFÉ: crème brûlée, naïve façade, Ærø, ø, ł, ß, İstanbul, ǖ, Việt Nam, Ŀ, Ĩ',
    'cafe\u0301 decomposed e\u0301cole, a stray \u0301mark, x\u0332y',
    'Москва МОСКВА москва; Αθήνα ΑΘΗΝΑ σοφός ΣΟΦΟΣ; Işık ılık İzmir; Straße STRASSE, ſ, Kelvin K',
    '東京の会議 日本語 한국어 中文',
    'हिन्दी भाषा and العربية مرحبا',
    'digits 3.14 1,000 ²½ Ⅻ, private \uE000x, emoji 😀 sign, 𐐀 Deseret, 𝐀 math',
    "it's don't l'été O'Neill — dashes–and“quotes” ‹ bonjour ›",
    'Ｆｕｌｌｗｉｄｔｈ ＡＢＣ ａｂｃ',
  ]
  for (const text of TEXTS) {
    test(text.slice(0, 40), () => {
      const doc = index(text)
      const expected = db.query<{ term: string }, [number]>('SELECT term FROM note_words WHERE doc = ? ORDER BY "offset"').all(doc).map(r => r.term)
      expect(tokenize(text).map(t => t.folded)).toEqual(expected)
    })
  }
})

describe("snippets of small notes: the same as FTS5's snippet()", () => {
  // [title, content (summary and transcript, as a note made from text), q]
  const CASES: [string, string, string][] = [
    ['Budget review', 'The budget for next year. Budget lines were cut; the budget owner agreed.', 'budget'],
    ['Team offsite', 'We talked about the venue, the food, and briefly the budget.', 'budget'],
    ['Réunion au café', 'Il a dit ‹ bonjour › au café du coin.', 'café'],
    ['Réunion au café', 'Il a dit ‹ bonjour › au café du coin.', 'CAFE'],
    ['Réunion au café', 'Il a dit ‹ bonjour › au café du coin.', 'bonjour'],
    ['Ember', 'ember glow', 'ember'],
    ['Harbor', 'The lantern by the water.', 'harbor lantern'],
    ['Harbor master', 'No light at all near the harbour.', 'harb'],
    ['Meeting notes', 'harbor quiet morning pier rope gull tide ferry bell lantern, then the harbor again at noon, and nothing more', 'harbor lantern'],
    ['Long day', 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen. The quartz was found: quartz everywhere after that, said the report of the survey team', 'quartz'],
    ['Long day', 'Intro words before the point: the budget was cut, as the budget owner said, and the review came late in the autumn of that year', 'budget review'],
    ['Notes', 'Москва и МОСКВА, a city; Αθήνα too', 'москва'],
    ['Tempo', 'storm stone stones stork stormy stonework', 'stor'],
    ['Archive 1999', 'Records from 1998 and 1999 were moved in Q3; the 1999 ones stay, said item_42b-x9.', '1999'],
    ['Archive', 'Records from 1998 and 1999 were moved in Q3; the 1999 ones stay, said item_42b-x9.', 'x9'],
  ]
  for (const [title, content, q] of CASES) {
    test(`${q}: ${content.slice(0, 30)}`, () => {
      const doc = index(title, content, content)
      const match = q.split(' ').map((w, i, all) => (i === all.length - 1 ? `"${w}"*` : `"${w}"`)).join(' ')
      const expected = db.query<{ s: string }, [string, number]>("SELECT snippet(note_search, -1, '«', '»', '…', 16) AS s FROM note_search WHERE note_search MATCH ? AND rowid = ?").get(match, doc)!.s
      const windows = [title, content, content].map(text => ({ from: 1, text, size: 400 }))
      expect(snippetOf(windows, { words: q.split(' ') })).toBe(expected)
    })
  }
})

describe('snippets from windows cut out of longer text', () => {
  const words = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `w${from + i}`).join(' ')
  // [what, windows (title, summary, transcript), q, snippet]
  const CASES: [string, { from: number; text: string; size: number }[], string, string][] = [
    ['a window from inside the text loses the word it cut into, and starts with …',
      [{ from: 1, size: 400, text: 'Title' }, { from: 1, size: 400, text: '' }, { from: 151, size: 400, text: `rd ${words(1, 10)} delta ${words(11, 40)}` }], 'delta',
      '…w4 w5 w6 w7 w8 w9 w10 «delta» w11 w12 w13 w14 w15 w16 w17 w18…'],
    ['a window of 401 characters goes on after its end: its last (cut) word is dropped, and … ends it',
      [{ from: 1, size: 400, text: 'Title' }, { from: 1, size: 400, text: '' }, { from: 1, size: 400, text: `delta ${'x'.repeat(394)} tail` }], 'delta',
      '«delta»…'],
    ['a window that ends where the column ends keeps what follows the last word',
      [{ from: 1, size: 400, text: 'Title' }, { from: 1, size: 400, text: '' }, { from: 1, size: 400, text: 'the delta end.' }], 'delta',
      'the «delta» end.'],
    ['no match in any window (a spelling not looked for): the first words of the title',
      [{ from: 1, size: 400, text: words(1, 20) }, { from: 1, size: 400, text: '' }, { from: 151, size: 400, text: 'nothing here' }], 'delta',
      'w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16…'],
    ['a word inside a longer one is not a match; the last word of q is also the start of one',
      [{ from: 1, size: 400, text: 'Title' }, { from: 1, size: 400, text: 'undelta deltas delta deltoid' }, { from: 1, size: 400, text: '' }], 'delt',
      'undelta «deltas» «delta» «deltoid»'],
    ['a word that is not the last must be whole',
      [{ from: 1, size: 400, text: 'Title' }, { from: 1, size: 400, text: 'undelta deltas delta deltoid gamma' }, { from: 1, size: 400, text: '' }], 'delta gam',
      'undelta deltas «delta» deltoid «gamma»'],
  ]
  for (const [what, windows, q, expected] of CASES) {
    test(what, () => {
      expect(snippetOf(windows, { words: q.split(' ') })).toBe(expected)
    })
  }
})

describe('where the window is centred: the spellings of the anchor word looked for in lower()', () => {
  test('the longest word, as typed, in lower case, without accents, capitalized, in capitals and decomposed, with ASCII letters lowered as SQLite lower() does', () => {
    expect(anchorSpellings({ words: ['budget'] })).toEqual(['budget'])
    expect(anchorSpellings({ words: ['the', 'Budget', 'q'] })).toEqual(['budget'])
    expect(anchorSpellings({ words: ['CAFÉ'] })).toEqual(['cafÉ', 'café', 'cafe', 'cafe\u0301'])
    expect(anchorSpellings({ words: ['москва'] })).toEqual(['москва', 'Москва', 'МОСКВА'])
  })
})
