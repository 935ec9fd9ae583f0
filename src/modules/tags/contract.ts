import { operationDefiner } from '../../http/contract'
import { IdParams } from '../../http/schemas'
import { AddNoteTagsRequest, CreateTagRequest, NoteTagParams, NoteTags, Tag, TagList, UpdateTagRequest } from './model'
import type { TagsService } from './service'

const defineOperation = operationDefiner<{ tags: TagsService }>()

const listTags = defineOperation({
  id: 'listTags', method: 'GET', path: '/v1/tags', tag: 'Tags',
  summary: 'List tags by name',
  description: 'Every tag of the library, by name (without regard to case). Filter notes by tag with `GET /v1/notes?tag=<name>` (repeated: notes carrying every one).',
  scopes: ['notes:read'], credits: 0,
  responses: { 200: TagList },
}, (_, { principal }, { tags }) => tags.list(principal))

const createTag = defineOperation({
  id: 'createTag', method: 'POST', path: '/v1/tags', tag: 'Tags',
  summary: 'Create a tag',
  description: '`name`: 1 to 50 characters after trimming, no control characters, unique in the library without regard to case (409 when taken); `color` as #rrggbb, else one from a palette chosen by the name.',
  scopes: ['notes:write'], credits: 0,
  body: CreateTagRequest,
  responses: { 201: Tag },
  errors: ['invalid_request', 'conflict'],
}, (body, { principal }, { tags }) => tags.create(principal, body))

const updateTag = defineOperation({
  id: 'updateTag', method: 'PATCH', path: '/v1/tags/:id', tag: 'Tags',
  summary: 'Rename or recolour a tag',
  description: 'Changes the fields sent (at least one); every note carrying the tag shows the change. 409 when another tag of the library has the new name.',
  scopes: ['notes:write'], credits: 0,
  params: IdParams,
  body: UpdateTagRequest,
  responses: { 200: Tag },
  errors: ['invalid_request', 'not_found', 'conflict'],
}, ({ id, ...body }, { principal }, { tags }) => tags.update(principal, id, body))

const deleteTag = defineOperation({
  id: 'deleteTag', method: 'DELETE', path: '/v1/tags/:id', tag: 'Tags',
  summary: 'Delete a tag',
  description: 'Deletes the tag; the notes carrying it are kept and lose it.',
  scopes: ['notes:write'], credits: 0,
  params: IdParams,
  responses: { 204: null },
  errors: ['not_found'],
}, ({ id }, { principal }, { tags }) => tags.delete(principal, id))

const getNoteTags = defineOperation({
  id: 'getNoteTags', method: 'GET', path: '/v1/notes/:id/tags', tag: 'Tags',
  summary: 'A note\'s tags and suggested tags',
  description: 'The note\'s tags by name, and `suggestedTags`: names drawn from the topics of its summary that it does not carry, never applied unasked (accept one by adding it).',
  scopes: ['notes:read'], credits: 0,
  params: IdParams,
  responses: { 200: NoteTags },
  errors: ['not_found'],
}, ({ id }, { principal }, { tags }) => tags.ofNote(principal, id))

const addNoteTag = defineOperation({
  id: 'addNoteTag', method: 'POST', path: '/v1/notes/:id/tags', tag: 'Tags',
  summary: 'Add tags to a note',
  description: 'Adds the library\'s tags named in `tags` to the note (each made, with `color` or a palette\'s colour, when the library has none of that name; names compared without regard to case); those it carries already stay as they are. Accepting a suggested tag is adding it. A note carries at most 50 tags: 400, and nothing added, past that.',
  scopes: ['notes:write'], credits: 0,
  params: IdParams,
  body: AddNoteTagsRequest,
  responses: { 200: NoteTags },
  errors: ['invalid_request', 'not_found'],
}, ({ id, tags: names, color }, { principal }, { tags }) => tags.add(principal, id, names, color))

const removeNoteTag = defineOperation({
  id: 'removeNoteTag', method: 'DELETE', path: '/v1/notes/:id/tags/:tagId', tag: 'Tags',
  summary: 'Take a tag off a note',
  description: 'The note no longer carries the tag; the tag stays in the library. 404 for a note or tag of another library.',
  scopes: ['notes:write'], credits: 0,
  params: NoteTagParams,
  responses: { 200: NoteTags },
  errors: ['not_found'],
}, ({ id, tagId }, { principal }, { tags }) => tags.remove(principal, id, tagId))

export const tagsOperations = [listTags, createTag, updateTag, deleteTag, getNoteTags, addNoteTag, removeNoteTag] as const
