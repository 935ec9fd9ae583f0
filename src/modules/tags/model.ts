import { t, type Static } from 'elysia'
import { DateTime } from '../../http/schemas'

/** The most tags one note carries. */
export const MAX_TAGS_PER_NOTE = 50
/** The longest tag name, in characters after trimming. */
export const MAX_TAG_NAME = 50

export const Tag = t.Object(
  {
    id: t.String({ examples: ['tag_01jd6x3m2k8v4n7p9q2r5s8t0w'] }),
    name: t.String({ description: 'unique in the library without regard to case' }),
    color: t.String({ description: '#rrggbb', examples: ['#2f6fdf'] }),
    createdAt: DateTime,
  },
  { title: 'Tag', description: 'A tag of the library: many per note, filtered by name with `GET /v1/notes?tag=`.' },
)
export type Tag = Static<typeof Tag>

/** A tag as a note carries it (Note.tags, list items, exports, webhooks). */
export const NoteTag = t.Object({ id: t.String(), name: t.String(), color: t.String() }, { title: 'NoteTag' })
export type NoteTag = Static<typeof NoteTag>

export const TagList = t.Object({ data: t.Array(Tag) }, { title: 'TagList', description: 'Every tag of the library, by name.' })

// Bounded here so a huge value is refused before it is read; the rules (1 to 50 characters after
// trimming, no control characters) are the service's, whose message says which one failed.
const Name = t.String({ maxLength: 1000, error: 'must be a tag name: 1 to 50 characters, no control characters' })
const Color = t.String({ pattern: '^#[0-9a-fA-F]{6}$', error: 'must be a colour as #rrggbb (for example #2f6fdf)' })

export const CreateTagRequest = t.Object({ name: Name, color: t.Optional(Color) }, { additionalProperties: false, title: 'CreateTagRequest' })
export type CreateTagRequest = Static<typeof CreateTagRequest>

export const UpdateTagRequest = t.Object(
  { name: t.Optional(Name), color: t.Optional(Color) },
  { additionalProperties: false, minProperties: 1, title: 'UpdateTagRequest', error: 'send at least one of name, color, and no other fields' },
)
export type UpdateTagRequest = Static<typeof UpdateTagRequest>

export const NoteTags = t.Object(
  {
    data: t.Array(NoteTag, { description: 'the note\'s tags, by name' }),
    suggestedTags: t.Array(t.String(), { description: 'names drawn from the topics of the note\'s summary that the note does not carry yet; never applied unasked: add one with POST /v1/notes/{id}/tags to accept it' }),
  },
  { title: 'NoteTags', description: 'A note\'s tags and the tags suggested for it.' },
)
export type NoteTags = Static<typeof NoteTags>

export const AddNoteTagsRequest = t.Object(
  {
    tags: t.Array(Name, { minItems: 1, maxItems: 1000, error: `must be a list of 1 to ${MAX_TAGS_PER_NOTE} tag names` }),
    color: t.Optional(Color),
  },
  { additionalProperties: false, title: 'AddNoteTagsRequest' },
)

export const NoteTagParams = t.Object({
  id: t.String({ minLength: 1, maxLength: 200, description: 'the note id' }),
  tagId: t.String({ minLength: 1, maxLength: 200, description: 'the tag id' }),
})
