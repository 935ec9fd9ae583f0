// The workspace page and an invitation's page (docs/decisions.md "Workspaces in the browser"): the
// workspace operations of /v1 (listWorkspaces … setSsoGroups) called as the signed-in person in the
// page's workspace. Names and emails go into the page as text, never as HTML.
import { apiCall, explain, workspaceId } from './api.js'
import { $, el, when } from './dom.js'

const ROLES = ['viewer', 'editor', 'admin', 'owner']
const VIA = { created: 'created it', invitation: 'invitation', sso: 'single sign-on' }
/** the workspace page works in the live library whatever the library's sandbox switch says */
const LIVE = { 'x-notesvc-library': 'live' }
const call = async (method, path, body) => (await apiCall(method, path, body, LIVE)).body
const wsPath = (rest = '') => `/v1/workspaces/${encodeURIComponent(workspaceId())}${rest}`

function showError(err) {
  const box = $('workspace-error')
  box.textContent = explain(err)
  box.hidden = false
}
const clearError = () => { $('workspace-error').hidden = true }

/** Switches the browser to `id` (the header's form, so the cookie is set by the server) and opens `next`. */
function switchTo(id, next) {
  const form = $('workspace-switch')
  form.elements.workspace.append(el('option', { value: id, text: id }))
  form.elements.workspace.value = id
  form.elements.next.value = next
  form.submit()
}

function initNewTeam() {
  const form = $('new-team-form')
  if (!form) return
  form.addEventListener('submit', async e => {
    e.preventDefault()
    const name = $('new-team-name').value.trim()
    if (!name) return
    try {
      const team = await call('POST', '/v1/workspaces', { name })
      $('new-team-status').textContent = `Created ${team.name}; switching to it…`
      switchTo(team.id, '/settings/workspace')
    } catch (err) { $('new-team-status').textContent = explain(err) }
  })
}

function roleCell(m, me) {
  const select = el('select', { 'aria-label': `Role of ${m.email}` }, ROLES.map(r => el('option', { value: r, text: r, selected: r === m.role })))
  select.addEventListener('change', async () => {
    try { await call('PATCH', wsPath(`/members/${encodeURIComponent(m.accountId)}`), { role: select.value }); await loadAdmin() } catch (err) { select.value = m.role; showError(err) }
  })
  return el('td', {}, select, m.accountId === me ? el('span', { class: 'hint', text: ' (you)' }) : null)
}

function memberRow(m, me) {
  const remove = el('button', { type: 'button', class: 'danger', text: m.accountId === me ? 'Leave' : 'Remove' })
  remove.addEventListener('click', async () => {
    if (!confirm(`Remove ${m.email} from this workspace? Their keys of it stop working at once; their notes stay.`)) return
    try { await call('DELETE', wsPath(`/members/${encodeURIComponent(m.accountId)}`)); clearError(); await loadAdmin() } catch (err) { showError(err) }
  })
  return el('tr', { 'data-member': m.email },
    el('td', { text: m.email }), roleCell(m, me), el('td', { text: VIA[m.via] || m.via }),
    el('td', {}, m.lastActiveAt ? when(m.lastActiveAt) : el('span', { class: 'muted', text: 'never' })), el('td', {}, remove))
}

function invitationItem(i) {
  const revoke = el('button', { type: 'button', class: 'secondary', text: 'Revoke' })
  revoke.addEventListener('click', async () => {
    try { await call('DELETE', wsPath(`/invitations/${encodeURIComponent(i.id)}`)); await loadAdmin() } catch (err) { showError(err) }
  })
  return el('li', { 'data-invitation': i.email }, `${i.email} as ${i.role}, until `, when(i.expiresAt), ' ', revoke)
}

function keyRow(k) {
  const cell = k.revokedAt ? el('td', {}, el('span', { class: 'tag revoked', text: 'revoked' })) : el('td')
  if (!k.revokedAt) {
    const revoke = el('button', { type: 'button', class: 'danger', text: 'Revoke' })
    revoke.addEventListener('click', async () => {
      if (!confirm(`Revoke ${k.start}…? Programs using it stop working at once.`)) return
      try { await call('DELETE', wsPath(`/keys/${encodeURIComponent(k.id)}`)); await loadAdmin() } catch (err) { showError(err) }
    })
    cell.append(revoke)
  }
  return el('tr', { 'data-key-id': k.id },
    el('td', {}, el('code', { text: `${k.start}…` })), el('td', { text: k.name || '—' }), el('td', { text: k.madeByEmail || 'the owner' }),
    el('td', { text: k.sandbox ? 'sandbox' : 'live' }), el('td', {}, k.lastUsedAt ? when(k.lastUsedAt) : el('span', { class: 'muted', text: 'never' })), cell)
}

const ACTIONS = {
  'workspace.created': 'Workspace created', 'workspace.renamed': 'Renamed', 'workspace.invitation_created': 'Invitation sent',
  'workspace.invitation_revoked': 'Invitation revoked', 'workspace.member_added': 'Member added', 'workspace.role_changed': 'Role changed',
  'workspace.member_removed': 'Member removed', 'workspace.key_created': 'Key created', 'workspace.key_revoked': 'Key revoked',
  'workspace.sso_groups_set': 'Group mappings set', 'note.moved': 'Note moved',
}

/** the emails of the members this page has shown, by account id: the audit log names people by id only */
const emails = new Map()
const who = id => emails.get(id) || id

async function loadActivity() {
  try {
    const events = (await call('GET', '/v1/audit-events?limit=20')).data
    $('workspace-activity').replaceChildren(...events.map(e => el('li', { 'data-action': e.action },
      when(e.at), ` ${ACTIONS[e.action] || e.action}`,
      e.target && e.target.type === 'account' ? `: ${who(e.target.id)}` : '',
      typeof e.details.keysRevoked === 'number' ? ` (${e.details.keysRevoked} key${e.details.keysRevoked === 1 ? '' : 's'} revoked)` : '',
      e.actor && e.actor.id ? `, by ${who(e.actor.id)}` : '')))
  } catch (err) { $('workspace-activity').replaceChildren(el('li', { class: 'error', text: explain(err) })) }
}

let me = ''
/** The admin sections, from getWorkspace. */
async function loadAdmin() {
  let w
  try { w = await call('GET', wsPath()) } catch (err) { showError(err); return }
  $('workspace-name').value = w.name
  $('members').tBodies[0].replaceChildren(...w.members.map(m => memberRow(m, me)))
  $('invitations').replaceChildren(...(w.invitations.length ? w.invitations.map(invitationItem) : [el('li', { class: 'muted', text: 'No open invitations.' })]))
  $('workspace-keys').tBodies[0].replaceChildren(...w.keys.map(keyRow))
  const u = w.usage
  // a team on the free plan has no monthly grant of its own (docs/decisions.md "Workspaces"): say who can add credits
  const noCredits = w.kind === 'team' && u.balance.totalRemaining === 0
    ? ` This team has no credits, so its recordings cannot be processed: a team on the free plan has no monthly grant. Ask the operator of this notesvc to add credits (notesvc accounts credit --email ${w.id}@workspace.invalid --credits N) or to put it on a paid plan.`
    : ''
  $('usage-summary').textContent = `${u.balance.totalRemaining} credits available (plan ${u.balance.plan}); ${u.creditsThisMonth} used this month.${noCredits}`
  $('usage-by-member').tBodies[0].replaceChildren(...u.byMember.map(b => el('tr', {}, el('td', { text: b.email || b.accountId }), el('td', { text: String(b.credits) }))))
  $('sso-mappings').value = w.ssoGroups.map(g => `${g.group} = ${g.role}`).join('\n')
  for (const m of w.members) emails.set(m.accountId, m.email)
  await loadActivity()
}

function initAdmin() {
  $('workspace-rename-form').addEventListener('submit', async e => {
    e.preventDefault()
    try { await call('PATCH', wsPath(), { name: $('workspace-name').value.trim() }); location.reload() } catch (err) { showError(err) }
  })
  $('invite-form').addEventListener('submit', async e => {
    e.preventDefault()
    try {
      const inv = await call('POST', wsPath('/invitations'), { email: $('invite-email').value.trim(), role: $('invite-role').value })
      const box = $('invite-created')
      box.replaceChildren(el('b', { text: `Invitation for ${inv.email} as ${inv.role}.` }), ' Send them this link; it is shown only this once and works for 7 days: ',
        el('code', { id: 'invite-link', text: inv.acceptUrl }))
      box.hidden = false
      $('invite-email').value = ''
      clearError()
      await loadAdmin()
    } catch (err) { showError(err) }
  })
  $('sso-form').addEventListener('submit', async e => {
    e.preventDefault()
    const lines = $('sso-mappings').value.split('\n').map(l => l.trim()).filter(Boolean)
    const mappings = lines.map(l => { const at = l.lastIndexOf('='); return { group: l.slice(0, at).trim(), role: l.slice(at + 1).trim() } })
    try { await call('PUT', wsPath('/sso-groups'), { mappings }); clearError(); await loadAdmin() } catch (err) { showError(err) }
  })
  loadAdmin()
}

function initMemberParts() {
  $('workspace-key-form').addEventListener('submit', async e => {
    e.preventDefault()
    try {
      const k = await call('POST', wsPath('/keys'), { name: $('workspace-key-name').value.trim() || undefined, sandbox: $('workspace-key-sandbox').checked })
      const box = $('workspace-key-created')
      box.replaceChildren(el('b', { text: `New ${k.sandbox ? 'sandbox' : 'live'} key for ${document.body.dataset.workspaceName}.` }), ' Copy it now: it is shown only this once. ', el('code', { id: 'workspace-new-key', text: k.key }))
      box.hidden = false
      if ($('workspace-keys')) await loadAdmin()
    } catch (err) { showError(err) }
  })
  $('leave-workspace').addEventListener('click', async () => {
    if (!confirm(`Leave ${document.body.dataset.workspaceName}? Your keys of it stop working at once.`)) return
    try { await call('DELETE', wsPath(`/members/${encodeURIComponent(me)}`)); location.assign('/') } catch (err) { showError(err) }
  })
}

export async function initWorkspacePage() {
  initNewTeam()
  if (document.body.dataset.workspaceKind !== 'team') return
  try {
    // the person's own id: listWorkspaces's personal workspace
    me = ((await call('GET', '/v1/workspaces')).data.find(w => w.kind === 'personal') || {}).id || ''
  } catch (err) { showError(err) }
  initMemberParts()
  if ($('members')) initAdmin()
}

export function initInvitationPage() {
  const main = $('main')
  $('accept-invitation').addEventListener('click', async () => {
    const button = $('accept-invitation')
    button.disabled = true
    try {
      const joined = await call('POST', '/v1/invitations/accept', { token: main.dataset.token })
      $('invitation-status').textContent = `You joined ${joined.name} as ${joined.role}; opening its library…`
      $('switch-after-join').submit()
    } catch (err) {
      $('invitation-status').textContent = explain(err)
      button.disabled = false
    }
  })
}
