import { ROLE_GRANTS, ROLES, type Role } from '../workspaces/model'
import { esc } from './pages'
import { SWITCH_PATH, type WorkspaceChoice } from './workspace-choice'

const roleOptions = (selected: Role) => ROLES.map(r => `<option value="${r}"${r === selected ? ' selected' : ''}>${r}</option>`).join('')

const NEW_TEAM = `<section id="new-team" class="card" aria-labelledby="new-team-title"><h2 id="new-team-title">New team workspace</h2>
<p class="hint">A library of its own with pooled credits, shared with the people you invite. You are its owner.</p>
<form id="new-team-form"><label for="new-team-name">Name</label><span class="searchrow"><input id="new-team-name" maxlength="100" required autocomplete="off"><button type="submit">Create</button></span></form>
<p id="new-team-status" class="hint" role="status" aria-live="polite"></p></section>`

/** The parts only admins and owners see; the script fills them from getWorkspace. */
const ADMIN_SECTIONS = `<section id="rename-section" class="card" aria-labelledby="rename-title"><h2 id="rename-title">Name</h2>
<form id="workspace-rename-form"><label for="workspace-name">Workspace name</label><span class="searchrow"><input id="workspace-name" maxlength="100" required autocomplete="off"><button type="submit">Rename</button></span></form></section>
<section id="members-section" class="card" aria-labelledby="members-title"><h2 id="members-title">Members</h2>
<div class="table-scroll" tabindex="0" role="region" aria-labelledby="members-title"><table id="members"><thead><tr><th>Email</th><th>Role</th><th>Joined by</th><th>Last active</th><th></th></tr></thead><tbody></tbody></table></div></section>
<section id="invite-section" class="card" aria-labelledby="invite-title"><h2 id="invite-title">Invitations</h2>
<form id="invite-form"><div class="row"><div><label for="invite-email">Email</label><input id="invite-email" type="email" maxlength="320" required autocomplete="off"></div>
<div><label for="invite-role">Role</label><select id="invite-role">${roleOptions('editor')}</select></div></div>
<button type="submit">Invite</button></form>
<div id="invite-created" class="newkey" role="status" hidden></div>
<ul id="invitations" class="plain-list"></ul></section>
<section id="keys-section" class="card" aria-labelledby="keys-title"><h2 id="keys-title">Keys of this workspace</h2>
<div class="table-scroll" tabindex="0" role="region" aria-labelledby="keys-title"><table id="workspace-keys"><thead><tr><th>Key</th><th>Name</th><th>Made by</th><th>Library</th><th>Last used</th><th></th></tr></thead><tbody></tbody></table></div></section>
<section id="usage-section" class="card" aria-labelledby="usage-title"><h2 id="usage-title">Usage</h2>
<p id="usage-summary"></p>
<table id="usage-by-member"><thead><tr><th>Member</th><th>Credits this month</th></tr></thead><tbody></tbody></table></section>
<section id="sso-section" class="card" aria-labelledby="sso-title"><h2 id="sso-title">Single sign-on groups</h2>
<p class="hint">People in these groups of the identity provider join this workspace with the role given when they sign in with single sign-on. One mapping a line: <code>group = role</code>.</p>
<form id="sso-form"><label for="sso-mappings">Mappings</label><textarea id="sso-mappings" rows="4" autocomplete="off"></textarea><button type="submit">Save mappings</button></form></section>
<section id="activity-section" class="card" aria-labelledby="activity-title"><h2 id="activity-title">Recent activity</h2>
<ul id="workspace-activity" class="plain-list"></ul></section>`

/**
 * The workspace page (`/settings/workspace`): for a team, what every member may do (make a key for it,
 * leave it) and, for admins and owners, the admin sections; viewers and editors see their role and a
 * notice instead of the admin sections (the API refuses those calls anyway). For the personal
 * workspace: what it is, and the form that makes a team.
 */
export function workspaceMain(w: WorkspaceChoice): string {
  const admin = w.role === 'admin' || w.role === 'owner'
  if (w.kind === 'personal') {
    return `<main id="main" class="workspace-page" tabindex="-1">
<h1 id="workspace-title">Personal</h1>
<p class="hint">Your personal workspace: its library and credits are yours alone. Its keys are on the <a href="/settings">account settings</a> page. Pick a team in the header's workspace menu, or make one.</p>
<p id="workspace-error" class="error" role="alert" hidden></p>
${NEW_TEAM}
</main>`
  }
  return `<main id="main" class="workspace-page" tabindex="-1">
<h1 id="workspace-title">${esc(w.name)}</h1>
<p id="workspace-role">Your role: <b>${esc(w.role)}</b> (${esc(ROLE_GRANTS[w.role])}).</p>
<p id="workspace-error" class="error" role="alert" hidden></p>
${admin ? ADMIN_SECTIONS : `<p id="admin-only" class="hint">Members, invitations, keys and usage of this workspace are shown to its admins and owners. Ask one of them to change your role.</p>`}
<section id="key-section" class="card" aria-labelledby="key-title"><h2 id="key-title">A key for ${esc(w.name)}</h2>
<p class="hint">A key of this workspace acts as you, with your role here; it stops working when you leave or are removed.</p>
<form id="workspace-key-form"><label for="workspace-key-name">Name</label><input id="workspace-key-name" maxlength="100" placeholder="e.g. team script" autocomplete="off">
<span class="check"><input type="checkbox" id="workspace-key-sandbox"><label for="workspace-key-sandbox">Sandbox (the workspace's test library)</label></span>
<button type="submit">Create key</button></form>
<div id="workspace-key-created" class="newkey" role="status" hidden></div></section>
<section id="leave-section" class="card" aria-labelledby="leave-title"><h2 id="leave-title">Leave</h2>
<p class="hint">Your keys of this workspace are revoked; the notes stay in it.</p>
<button type="button" id="leave-workspace" class="danger">Leave ${esc(w.name)}</button></section>
${NEW_TEAM}
</main>`
}

/** An invitation that can still be accepted, as its page shows it. */
export interface InvitationView {
  token: string
  workspaceId: string
  workspaceName: string
  role: Role
  email: string
}

/**
 * An invitation's page (`/invitations/<token>`, signed in): "Join <team> as <role>"; the button calls
 * acceptInvitation, then the hidden form switches to the team. A person signed in with another email
 * is told so (the API would answer 404).
 */
export function invitationMain(i: InvitationView, me: { email: string; csrf: string }): string {
  const mismatch = i.email.toLowerCase() !== me.email.toLowerCase()
  return `<main id="main" class="invitation-page narrow" tabindex="-1" data-token="${esc(i.token)}">
<h1>Invitation to ${esc(i.workspaceName)}</h1>
<p>You are invited as <b>${esc(i.role)}</b> (${esc(ROLE_GRANTS[i.role])}).</p>
${mismatch ? `<p id="invitation-mismatch" class="error" role="alert">This invitation is for ${esc(i.email)}, and you are signed in as ${esc(me.email)}. Sign out and sign in as ${esc(i.email)} to accept it.</p>` : ''}
<button type="button" id="accept-invitation" class="primary"${mismatch ? ' disabled' : ''}>Join ${esc(i.workspaceName)} as ${esc(i.role)}</button>
<p id="invitation-status" role="status" aria-live="polite"></p>
<form method="post" action="${SWITCH_PATH}" id="switch-after-join" hidden><input type="hidden" name="csrf" value="${esc(me.csrf)}"><input type="hidden" name="next" value="/"><input type="hidden" name="workspace" value="${esc(i.workspaceId)}"></form>
</main>`
}
