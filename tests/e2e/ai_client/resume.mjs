// The AI SDK's own chat client (AbstractChat + DefaultChatTransport from the `ai` package, as
// useChat runs them) against two Confidant servers: send a message to server A, lose the
// connection mid-reply, resume on server B (GET {api}/{chatId}/stream), print what the chat holds.
//
//   node resume.mjs '{"a": URL, "b": URL, "headers": {...}, "sessionId": "...", "app": "...",
//                     "message": "...", "mode": "drop" | "reload"}'
//
// drop:   the chat sends on A; the test's fetch hands the client whole SSE frames until the
//         first text-delta, then hangs up on A and fails the body with a network TypeError (what
//         a dropped connection looks like to fetch); the chat then resumes on B, asking for the
//         parts after those it already has (`from`).
// reload: a fresh chat with the same id (a page reloaded on another instance) resumes on B
//         from the beginning.
// Prints one JSON line: the assistant message's text, the parts received before the drop, the
// chat's status and error after it, and the final status.
import { AbstractChat, DefaultChatTransport } from "ai";

const config = JSON.parse(process.argv[2]);
const query = (extra) =>
  new URLSearchParams({ app: config.app, ...extra }).toString();

class MemoryState {
  status = "ready";
  error = undefined;
  messages = [];
  pushMessage = (message) => {
    this.messages = this.messages.concat(message);
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index, message) => {
    this.messages = [
      ...this.messages.slice(0, index),
      this.snapshot(message),
      ...this.messages.slice(index + 1),
    ];
  };
  snapshot = (thing) => structuredClone(thing);
}

class Chat extends AbstractChat {
  constructor(init) {
    super({ ...init, state: new MemoryState() });
  }
}

let delivered = 0; // SSE data frames the client received from A before the drop
let textBeforeDrop = "";

// A fetch whose POST responses break after the first text-delta frame, like a train tunnel.
const responses = []; // status of every request, for the test's messages
async function droppingFetch(url, init) {
  const response = await fetch(url, init);
  responses.push(`${init?.method ?? "GET"} ${response.status}`);
  if (init?.method !== "POST" || config.mode !== "drop" || !response.ok) return response;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = "";
  let drop = false;
  const frames = [];
  const body = new ReadableStream({
    async pull(controller) {
      while (frames.length === 0) {
        if (drop) {
          await reader.cancel(); // hang up on server A
          controller.error(new TypeError("network error: the connection dropped"));
          return;
        }
        const { value, done } = await reader.read();
        if (done) {
          controller.close();
          return;
        }
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) !== -1) {
          frames.push(buffer.slice(0, end + 2));
          buffer = buffer.slice(end + 2);
        }
      }
      const frame = frames.shift();
      controller.enqueue(encoder.encode(frame));
      if (!frame.startsWith("data: [DONE]")) delivered += 1;
      if (frame.includes('"type":"text-delta"')) {
        textBeforeDrop += JSON.parse(frame.slice("data: ".length)).delta;
        drop = true; // the next read fails: the chat has this frame, and nothing after it
        frames.length = 0;
      }
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

const transport = new DefaultChatTransport({
  api: `${config.a}/v1/chat`,
  headers: config.headers,
  fetch: droppingFetch,
  // Confidant keeps the history: send the new message and the session id (= the chat id).
  prepareSendMessagesRequest: ({ id, messages }) => ({
    body: {
      app: config.app,
      session_id: id,
      message: messages.at(-1).parts.map((p) => (p.type === "text" ? p.text : "")).join(""),
    },
  }),
  // The resume goes to the other instance; `from` = the parts this chat already has.
  prepareReconnectToStreamRequest: ({ id }) => ({
    api: `${config.b}/v1/chat/${encodeURIComponent(id)}/stream?${query(
      config.mode === "drop" ? { from: String(delivered) } : {},
    )}`,
  }),
});

const errors = [];
const chat = new Chat({
  id: config.sessionId,
  transport,
  onError: (error) => errors.push(String(error?.stack ?? error)),
});
let afterDrop = null;
if (config.mode === "drop") {
  await chat.sendMessage({ text: config.message });
  afterDrop = { status: chat.status, error: chat.error ? String(chat.error) : null };
}
const resumeStarted = Date.now();
await chat.resumeStream();
const resumeMs = Date.now() - resumeStarted;
const last = chat.messages.at(-1);
const text =
  last?.role === "assistant"
    ? last.parts.filter((p) => p.type === "text").map((p) => p.text).join("")
    : "";
console.log(
  JSON.stringify({
    text,
    delivered,
    textBeforeDrop,
    afterDrop,
    status: chat.status,
    error: chat.error ? String(chat.error) : null,
    roles: chat.messages.map((m) => m.role),
    textParts: last ? last.parts.filter((p) => p.type === "text").length : 0,
    errors,
    responses,
    resumeMs,
  }),
);
