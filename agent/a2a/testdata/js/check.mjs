// Runs the @a2a-js/sdk clients against a devicectl A2A server: 1.3.0's ClientFactory (A2A 1.0)
// and 0.3.14's A2AClient (A2A 0.3). Each does send, stream, get and cancel; 1.0 also lists.
//
//   A2A_URL=http://127.0.0.1:8080 [A2A_TOKEN=...] [A2A_MAC=...] node check.mjs
//
// The server's agent must answer "把音量调到30" with a reply and keep a turn whose text is
// A2A_SLOW_TEXT (default "think hard") running until it is canceled. It exits non-zero on the
// first mismatch.
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from 'a2a-sdk-v1/client';
import { Role, TaskState } from 'a2a-sdk-v1';
import { A2AClient } from 'a2a-sdk-v03/client';
import { randomUUID } from 'node:crypto';

const base = process.env.A2A_URL;
if (!base) {
  console.error('A2A_URL is not set');
  process.exit(2);
}
const token = process.env.A2A_TOKEN || '';
const mac = process.env.A2A_MAC || '';
const slowText = process.env.A2A_SLOW_TEXT || 'think hard';
const sayText = process.env.A2A_TEXT || '把音量调到30';
const wantReply = process.env.A2A_WANT_REPLY || ''; // "" = any non-empty reply

// fetchWithToken adds the bearer token, when one is given, to every request.
const fetchWithToken = (input, init = {}) => {
  if (!token) return fetch(input, init);
  const headers = new Headers(init.headers || {});
  headers.set('Authorization', `Bearer ${token}`);
  return fetch(input, { ...init, headers });
};

let failures = 0;
function check(ok, what, got) {
  if (ok) {
    console.log(`ok   ${what}`);
  } else {
    failures++;
    console.log(`FAIL ${what}: got ${JSON.stringify(got)}`);
  }
}

function checkReply(what, text) {
  check(wantReply ? text === wantReply : text.length > 0, what, text);
}

const metadata = mac ? { mac } : {};

// ---- A2A 1.0: @a2a-js/sdk 1.3.0, ClientFactory ----
async function v1() {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: fetchWithToken })],
    }),
  );
  const client = await factory.createFromUrl(base);
  check(client.protocolVersion === '1.0', '1.0: the client picked the 1.0 interface', client.protocolVersion);

  const message = (text) => ({
    message: {
      messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
      metadata, extensions: [], referenceTaskIds: [],
    },
    tenant: '', configuration: undefined, metadata: undefined,
  });
  const partsText = (parts) => (parts || []).map((p) => (p.content && p.content.$case === 'text' ? p.content.value : '')).join('');

  // send
  const sent = await client.sendMessage(message(sayText));
  check(sent && sent.status && sent.status.state === TaskState.TASK_STATE_COMPLETED, '1.0 send: completed', sent && sent.status);
  checkReply('1.0 send: reply as an artifact', (sent.artifacts || []).map((a) => partsText(a.parts)).join(''));
  checkReply('1.0 send: reply as the status message', partsText(sent.status.message && sent.status.message.parts));

  // stream
  const states = [];
  let chunks = '';
  let taskId = '';
  for await (const ev of client.sendMessageStream(message(sayText))) {
    const p = ev.payload || ev;
    const kind = p.$case;
    if (kind === 'task') { taskId = p.value.id; states.push(p.value.status.state); }
    if (kind === 'statusUpdate') { taskId = p.value.taskId; states.push(p.value.status.state); }
    if (kind === 'artifactUpdate') chunks += partsText(p.value.artifact.parts);
  }
  check(states.includes(TaskState.TASK_STATE_WORKING) && states.at(-1) === TaskState.TASK_STATE_COMPLETED, '1.0 stream: working ... completed', states);
  checkReply('1.0 stream: the reply in artifact updates', chunks);

  // get
  const got = await client.getTask({ id: taskId, tenant: '', historyLength: undefined });
  check(got.id === taskId && got.status.state === TaskState.TASK_STATE_COMPLETED, '1.0 get: the streamed task, completed', got.status);

  // list: the SDK sends "status":"UNRECOGNIZED" when given no status, which filters nothing
  await client.sendMessage(message(sayText)); // a third task, for a second page
  const page1 = await client.listTasks({ pageSize: 2 });
  check(page1.tasks.length === 2 && page1.totalSize >= 2 && page1.nextPageToken !== '',
    '1.0 list: a first page of 2 with a next page', { n: page1.tasks.length, total: page1.totalSize, next: page1.nextPageToken });
  check(page1.tasks.some((t) => t.id === taskId), '1.0 list: the streamed task on the first page', page1.tasks.map((t) => t.id));
  const page2 = await client.listTasks({ pageSize: 2, pageToken: page1.nextPageToken });
  const ids1 = new Set(page1.tasks.map((t) => t.id));
  check(page2.tasks.length >= 1 && page2.tasks.every((t) => !ids1.has(t.id)), '1.0 list: the next page, other tasks',
    page2.tasks.map((t) => t.id));
  const completed = await client.listTasks({ status: TaskState.TASK_STATE_COMPLETED, historyLength: 0 });
  check(completed.tasks.length >= 2 && completed.tasks.every((t) => t.status.state === TaskState.TASK_STATE_COMPLETED && t.history.length === 0),
    '1.0 list: completed tasks, no history', completed.tasks.map((t) => [t.status.state, t.history.length]));
  const none = await client.listTasks({ contextId: `no-such-context-${randomUUID()}` });
  check(none.tasks.length === 0 && none.totalSize === 0, '1.0 list: an unknown context, no tasks', none);

  // cancel: a turn that runs until it is stopped
  const ctl = new AbortController();
  let slowId = '';
  const stream = client.sendMessageStream(message(slowText), { signal: ctl.signal });
  for await (const ev of stream) {
    const p = ev.payload || ev;
    if (p.$case === 'statusUpdate' && p.value.status.state === TaskState.TASK_STATE_WORKING) { slowId = p.value.taskId; break; }
    if (p.$case === 'task') slowId = p.value.id;
  }
  ctl.abort();
  const canceled = await client.cancelTask({ id: slowId, tenant: '', metadata: undefined });
  check(canceled.status.state === TaskState.TASK_STATE_CANCELED, '1.0 cancel: canceled', canceled.status);
  const after = await client.getTask({ id: slowId, tenant: '', historyLength: undefined });
  check(after.status.state === TaskState.TASK_STATE_CANCELED, '1.0 get after cancel: canceled', after.status);
}

// ---- A2A 0.3: @a2a-js/sdk 0.3.14, A2AClient ----
async function v03() {
  const client = await A2AClient.fromCardUrl(`${base}/.well-known/agent-card.json`, { fetchImpl: fetchWithToken });
  const message = (text) => ({
    message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], metadata },
  });
  const partsText = (parts) => (parts || []).filter((p) => p.kind === 'text').map((p) => p.text).join('');
  const result = (resp, what) => {
    if (resp.error) throw new Error(`${what}: JSON-RPC error ${JSON.stringify(resp.error)}`);
    return resp.result;
  };

  // send
  const sent = result(await client.sendMessage(message(sayText)), '0.3 send');
  check(sent.kind === 'task' && sent.status.state === 'completed', '0.3 send: completed', sent.status);
  checkReply('0.3 send: reply as an artifact', (sent.artifacts || []).map((a) => partsText(a.parts)).join(''));

  // stream
  const states = [];
  let chunks = '';
  let taskId = '';
  for await (const ev of client.sendMessageStream(message(sayText))) {
    if (ev.kind === 'task') { taskId = ev.id; states.push(ev.status.state); }
    if (ev.kind === 'status-update') { taskId = ev.taskId; states.push(ev.status.state); }
    if (ev.kind === 'artifact-update') chunks += partsText(ev.artifact.parts);
  }
  check(states.includes('working') && states.at(-1) === 'completed', '0.3 stream: working ... completed', states);
  checkReply('0.3 stream: the reply in artifact updates', chunks);

  // get
  const got = result(await client.getTask({ id: taskId }), '0.3 get');
  check(got.id === taskId && got.status.state === 'completed', '0.3 get: the streamed task, completed', got.status);

  // cancel
  let slowId = '';
  const stream = client.sendMessageStream(message(slowText));
  for await (const ev of stream) {
    if (ev.kind === 'status-update' && ev.status.state === 'working') { slowId = ev.taskId; break; }
    if (ev.kind === 'task') slowId = ev.id;
  }
  await stream.return();
  const canceled = result(await client.cancelTask({ id: slowId }), '0.3 cancel');
  check(canceled.status.state === 'canceled', '0.3 cancel: canceled', canceled.status);
  const after = result(await client.getTask({ id: slowId }), '0.3 get after cancel');
  check(after.status.state === 'canceled', '0.3 get after cancel: canceled', after.status);
}

for (const [name, run] of [['A2A 1.0 (@a2a-js/sdk 1.3.0)', v1], ['A2A 0.3 (@a2a-js/sdk 0.3.14)', v03]]) {
  console.log(`# ${name}`);
  try {
    await run();
  } catch (err) {
    failures++;
    console.log(`FAIL ${name}: ${err && err.stack ? err.stack : err}`);
  }
}
console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
