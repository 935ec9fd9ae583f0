/**
 * Compile-time check, run by `bunx tsc --noEmit -p .` (strict): every answer notesvc publishes for
 * OpenAI's audio and model routes is assignable to the type the official `openai` package declares
 * for it, so a field OpenAI requires cannot go missing or change type unnoticed. Nothing runs here;
 * the same answers are checked at run time through the client in the tests beside this file.
 */
import type { Static } from 'elysia'
import type { Transcription, TranscriptionDiarized, TranscriptionSegment, TranscriptionVerbose, TranscriptionWord } from 'openai/resources/audio/transcriptions'
import type { Translation, TranslationVerbose } from 'openai/resources/audio/translations'
import type { Model } from 'openai/resources/models'
import type { OpenAiDiarizedTranscription, OpenAiModel, OpenAiModelList, OpenAiTranscription, OpenAiVerboseTranscription, OpenAiVerboseTranslation } from '../../../src/modules/openai/model'
import type { verboseSegment } from '../../../src/modules/openai/service'

/** Compiles only when `Ours` can be used where OpenAI's client declares `Theirs`. */
type Fits<Theirs, Ours extends Theirs> = [Theirs, Ours]

export type OpenAiTypeChecks = [
  Fits<Transcription, Static<typeof OpenAiTranscription>>,
  Fits<TranscriptionVerbose, Static<typeof OpenAiVerboseTranscription>>,
  Fits<TranscriptionSegment, NonNullable<Static<typeof OpenAiVerboseTranscription>['segments']>[number]>,
  Fits<TranscriptionWord, NonNullable<Static<typeof OpenAiVerboseTranscription>['words']>[number]>,
  Fits<NonNullable<TranscriptionVerbose['usage']>, Static<typeof OpenAiVerboseTranscription>['usage']>,
  Fits<TranscriptionDiarized, Static<typeof OpenAiDiarizedTranscription>>,
  Fits<Translation, Static<typeof OpenAiTranscription>>,
  Fits<TranslationVerbose, Static<typeof OpenAiVerboseTranslation>>,
  Fits<Model, Static<typeof OpenAiModel>>,
  Fits<{ object: 'list'; data: Model[] }, Static<typeof OpenAiModelList>>,
  // the segments the service builds, not only the published schema
  Fits<TranscriptionSegment, ReturnType<typeof verboseSegment>>,
]
