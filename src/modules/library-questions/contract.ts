import { operationDefiner } from '../../http/contract'
import { charged } from '../../http/answer'
import { LibraryAnswer, LibraryQuestionRequest } from './model'
import type { LibraryQuestionsService } from './service'

const defineOperation = operationDefiner<{ libraryQuestions: LibraryQuestionsService }>()

// beside askNoteQuestion (SPEC "Notes"): the same scopes and price, asked of every note at once
const askLibrary = defineOperation({
  id: 'askLibrary', method: 'POST', path: '/v1/questions', tag: 'Notes',
  summary: 'Ask a question across the library',
  description: 'Answers a question from the transcripts of all the library\'s notes (or those of `folderId`, or carrying the tag named `tag`, or created between `from` and `to`), with `citations`: each passage the answer comes from, best first, with its note, title, time range, speaker and `url`, the note page at that moment (`/notes/{id}?t=<start>`). The notes are found through the full-text index, their passages ranked together, and the answer is written by the summary engine (NOTESVC_LLM: the builtin engine\'s sentences, or Ollama\'s answer from the passages). When nothing in the library speaks of it: "Nothing in the library answers this." with no citations, not charged. Charges 1 credit, as a question about one note (nothing with a sandbox key, whose answer is fixed).',
  role: 'viewer', scopes: ['notes:read', 'summaries:write'], credits: 1,
  body: LibraryQuestionRequest,
  responses: { 200: LibraryAnswer },
  errors: ['insufficient_credits', 'upstream_failure'],
}, async (body, { principal }, { libraryQuestions }) => charged(await libraryQuestions.ask(principal, body)))

export const libraryQuestionsOperations = [askLibrary] as const
