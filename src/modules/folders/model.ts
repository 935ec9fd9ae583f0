import { t, type Static } from 'elysia'
import { DateTime, Nullable } from '../../http/schemas'

export const Folder = t.Object(
  { id: t.String({ examples: ['fld_01jd6x3m2k8v4n7p9q2r5s8t0w'] }), name: t.String(), color: Nullable(t.String()), createdAt: DateTime, updatedAt: DateTime },
  { title: 'Folder', description: 'A folder that groups notes.' },
)
export type Folder = Static<typeof Folder>

export const FolderList = t.Object({ data: t.Array(Folder) }, { title: 'FolderList', description: 'Every folder of the library, by name.' })

const Name = t.String({ minLength: 1, maxLength: 200, error: 'must be a string of 1 to 200 characters' })
const Color = t.String({ maxLength: 50, error: 'must be a string of at most 50 characters' })

export const CreateFolderRequest = t.Object(
  { name: Name, color: t.Optional(Color) },
  { additionalProperties: false, title: 'CreateFolderRequest' },
)
export type CreateFolderRequest = Static<typeof CreateFolderRequest>

export const UpdateFolderRequest = t.Object(
  { name: t.Optional(Name), color: t.Optional(Color) },
  { additionalProperties: false, minProperties: 1, title: 'UpdateFolderRequest', error: 'send at least one of name, color, and no other fields' },
)
export type UpdateFolderRequest = Static<typeof UpdateFolderRequest>
