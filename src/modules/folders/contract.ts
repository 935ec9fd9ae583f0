import { operationDefiner } from '../../http/contract'
import { IdParams } from '../../http/schemas'
import { auditBy } from '../audit/by'
import { CreateFolderRequest, Folder, FolderList, UpdateFolderRequest } from './model'
import type { FoldersService } from './service'

const defineOperation = operationDefiner<{ folders: FoldersService }>()

const listFolders = defineOperation({
  id: 'listFolders', method: 'GET', path: '/v1/folders', tag: 'Folders',
  summary: 'List folders by name',
  description: 'Every folder of the library, by name (case-insensitive, ties by id).',
  scopes: ['folders:read'], credits: 0,
  responses: { 200: FolderList },
}, (_, { principal }, { folders }) => folders.list(principal))

const createFolder = defineOperation({
  id: 'createFolder', method: 'POST', path: '/v1/folders', tag: 'Folders',
  summary: 'Create a folder',
  description: 'Creates an empty folder; file notes into it with `folderId`.',
  scopes: ['folders:write'], credits: 0,
  body: CreateFolderRequest,
  responses: { 201: Folder },
}, (body, { principal }, { folders }) => folders.create(principal, body))

const getFolder = defineOperation({
  id: 'getFolder', method: 'GET', path: '/v1/folders/:id', tag: 'Folders',
  summary: 'Get a folder',
  description: 'One folder of the library.',
  scopes: ['folders:read'], credits: 0,
  params: IdParams,
  responses: { 200: Folder },
  errors: ['not_found'],
}, ({ id }, { principal }, { folders }) => folders.get(principal, id))

const updateFolder = defineOperation({
  id: 'updateFolder', method: 'PATCH', path: '/v1/folders/:id', tag: 'Folders',
  summary: 'Update a folder',
  description: 'Renames or recolours a folder (send at least one field).',
  scopes: ['folders:write'], credits: 0,
  params: IdParams,
  body: UpdateFolderRequest,
  responses: { 200: Folder },
  errors: ['not_found'],
}, ({ id, ...body }, { principal }, { folders }) => folders.update(principal, id, body))

const deleteFolder = defineOperation({
  id: 'deleteFolder', method: 'DELETE', path: '/v1/folders/:id', tag: 'Folders',
  summary: 'Delete a folder, keeping its notes',
  description: 'Deletes the folder; its notes are kept and move to the top level (`folderId` becomes null).',
  scopes: ['folders:write'], credits: 0,
  params: IdParams,
  responses: { 204: null },
  errors: ['not_found'],
}, ({ id }, caller, { folders }) => folders.delete(caller.principal, id, auditBy(caller)))

export const foldersOperations = [listFolders, createFolder, getFolder, updateFolder, deleteFolder] as const
