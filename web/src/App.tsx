import { useChat } from "@ai-sdk/react";
import { type ChatTransport, DefaultChatTransport, type UIMessage, type UIMessageChunk } from "ai";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import {
  ApiError,
  type AppInfo,
  type Emotion,
  type Progress,
  type SessionInfo,
  deleteSession,
  listApps,
  listSessions,
  readEmotions,
  readSession,
} from "./api";
import { eventsToMessages } from "./history";
import {
  type Crisis,
  CrisisCard,
  EmotionChart,
  type HumanRequest,
  HumanPrompt,
  InterruptedNote,
  ProgressBar,
  stageName,
  ToolCall,
  toolName,
} from "./parts";

type AnyPart = UIMessage["parts"][number] & Record<string, any>;
type RetryNotice = { attempt: number; max_retries: number; delay_s: number; reason: string };

const USER_KEY = "confidant.user";

function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function readHash(): { app?: string; session?: string } {
  const params = new URLSearchParams(window.location.hash.slice(1));
  return { app: params.get("app") ?? undefined, session: params.get("session") ?? undefined };
}

function writeHash(app: string, session: string) {
  const hash = `#app=${encodeURIComponent(app)}&session=${encodeURIComponent(session)}`;
  if (window.location.hash !== hash) history.replaceState(null, "", hash);
}

/** What the page tells a person about a failed request. */
function describeError(error: Error): { text: string; busy: boolean } {
  try {
    const body = JSON.parse(error.message);
    if (body?.error?.code === "session_busy") {
      return { text: "Still answering your previous message. Try again in a moment.", busy: true };
    }
    if (body?.error?.message) return { text: body.error.message, busy: false };
  } catch {
    // a plain message (an `error` part of the stream)
  }
  return { text: error.message || "Something went wrong.", busy: false };
}

/** `base` with every chunk of its streams shown to `see` first, in stream order. */
function watched(
  base: ChatTransport<UIMessage>,
  see: (chunk: UIMessageChunk) => void,
): ChatTransport<UIMessage> {
  const tap = (stream: ReadableStream<UIMessageChunk>) =>
    stream.pipeThrough(
      new TransformStream<UIMessageChunk, UIMessageChunk>({
        transform(chunk, out) {
          see(chunk);
          out.enqueue(chunk);
        },
      }),
    );
  return {
    sendMessages: async (options) => tap(await base.sendMessages(options)),
    reconnectToStream: async (options) => {
      const stream = await base.reconnectToStream(options);
      return stream && tap(stream);
    },
  };
}

/** Chunks that show the model answering: a retry happens before a model call's first chunk,
 * so after one of these the retried call went through. */
const ANSWERING = new Set(["text-start", "reasoning-start", "tool-input-start", "tool-input-available"]);

/** The prompt a pause part asks for, or null for any other part. */
function humanRequest(type: string, data: Record<string, any>): HumanRequest | null {
  if (type === "data-human-input-needed") return { kind: "input", data };
  if (type === "data-human-confirmation-needed") return { kind: "confirmation", data };
  return null;
}

function lastOf<T>(items: T[]): T | undefined {
  return items[items.length - 1];
}

export function App() {
  const initial = readHash();
  const [apps, setApps] = useState<AppInfo[]>([]);
  const [app, setApp] = useState(initial.app ?? "");
  const [skill, setSkill] = useState<string>("");
  const [userId, setUserId] = useState(() => localStorage.getItem(USER_KEY) || "demo");
  const [sessionId, setSessionId] = useState(initial.session ?? newSessionId());
  const [sessions, setSessions] = useState<SessionInfo[]>([]);
  const [restoredProgress, setRestoredProgress] = useState<Progress | null>(null);
  const [emotions, setEmotions] = useState<Emotion[] | null>(null);
  const [retries, setRetries] = useState<RetryNotice[]>([]);
  const [transientCrisis, setTransientCrisis] = useState<Crisis | null>(null);
  const [transientHuman, setTransientHuman] = useState<HumanRequest | null>(null);
  const [draft, setDraft] = useState("");
  // A page request that failed (apps, a conversation's history, a delete), shown until the next.
  const [loadError, setLoadError] = useState<string | null>(null);
  // The message taken back into the composer after a failed send: sent again unchanged, it
  // keeps its id, so a message the server did store after all is not stored twice.
  const unsent = useRef<{ id: string; text: string } | null>(null);
  // Whether the request in flight carries a message sent from this page; false while a reply
  // is resumed after a reload, whose user message is stored already.
  const sentHere = useRef(false);
  // Whether the reply in flight has sent anything: then the server has the message.
  const replyBegun = useRef(false);

  // The transport reads the current picks through refs: it is built once per page.
  const picks = useRef({ app, skill, userId });
  picks.current = { app, skill, userId };
  const transport = useMemo(
    () =>
      watched(
        new DefaultChatTransport({
          api: "/v1/chat",
          headers: () => ({ "X-User-Id": picks.current.userId }),
          body: () => ({
            app: picks.current.app,
            ...(picks.current.skill ? { skill: picks.current.skill } : {}),
          }),
          // Our endpoint keeps the history itself: send only the new message, with its id as
          // the idempotency key (a resend of a stored message gets the stored reply).
          prepareSendMessagesRequest: ({ id, messages, body, trigger }) => {
            const last = lastOf(messages);
            const message = (last?.parts ?? [])
              .map((p) => (p.type === "text" ? p.text : ""))
              .join("");
            const key = trigger === "submit-message" && last?.role === "user" ? last.id : undefined;
            const message_id = key ? { message_id: key } : {};
            return { body: { ...body, session_id: id, message, ...message_id } };
          },
          // Resuming a reply still being answered (after a reload): GET /v1/chat/{id}/stream.
          prepareReconnectToStreamRequest: ({ id }) => ({
            api: `/v1/chat/${encodeURIComponent(id)}/stream?app=${encodeURIComponent(picks.current.app)}`,
          }),
        }),
        // Every chunk, in stream order (`onData` sees data parts only): a retry notice shows
        // until the retried model call answers.
        (chunk) => {
          replyBegun.current = true;
          if (chunk.type === "data-retry") setRetries((r) => [...r, chunk.data as RetryNotice]);
          else if (ANSWERING.has(chunk.type)) setRetries([]);
        },
      ),
    [],
  );

  const { messages, setMessages, sendMessage, resumeStream, status, error, clearError } = useChat({
    id: sessionId,
    transport,
    onData: (part) => {
      // Parts that stay in the message are rendered from it; only transient ones are kept here.
      if (!(part as { transient?: boolean }).transient) return;
      if (part.type === "data-crisis") setTransientCrisis(part.data as Crisis);
      const request = humanRequest(part.type, part.data as Record<string, any>);
      if (request) setTransientHuman(request);
    },
    onFinish: () => {
      void refreshSessions();
      void refreshEmotions();
    },
  });

  const currentApp = apps.find((a) => a.name === app);

  useEffect(() => {
    listApps()
      .then((found) => {
        setApps(found);
        if (!found.some((a) => a.name === app) && found.length) setApp(found[0].name);
      })
      .catch((e: Error) => setLoadError(`Could not load the apps: ${e.message}`));
  }, []);

  useEffect(() => {
    setSkill(currentApp?.default_skill ?? currentApp?.skills[0]?.id ?? "");
  }, [currentApp?.name]);

  useEffect(() => {
    localStorage.setItem(USER_KEY, userId);
  }, [userId]);

  const refreshSessions = useCallback(async () => {
    if (!picks.current.app) return;
    setSessions(await listSessions(picks.current.userId, picks.current.app));
  }, []);

  const refreshEmotions = useCallback(async () => {
    if (!picks.current.app) return;
    setEmotions(await readEmotions(picks.current.userId, picks.current.app, sessionId));
  }, [sessionId]);

  // A session picked, restored from the address, or a different user/app: load its history.
  useEffect(() => {
    if (!app) return;
    writeHash(app, sessionId);
    setRetries([]);
    setTransientCrisis(null);
    setTransientHuman(null);
    setRestoredProgress(null);
    setLoadError(null);
    let live = true;
    readSession(userId, app, sessionId)
      .then(({ session, events, pauses }) => {
        if (!live) return;
        setMessages(eventsToMessages(events));
        setRestoredProgress(session.progress ?? null);
        // A run paused for the person (taskflow): its prompt again, as the pausing turn ended.
        const pause = lastOf(pauses);
        if (pause) setTransientHuman(humanRequest(pause.type, pause.data));
        // A reply still being answered (the page was reloaded mid-reply, or another tab sent
        // it): follow it to its end. Only then: `useChat({ resume: true })` would also replay a
        // reply that just finished, which the history above already shows.
        if (session.busy) {
          sentHere.current = false;
          void resumeStream();
        }
      })
      .catch((e: Error) => {
        if (!live) return;
        setMessages([]);
        // 404: a new conversation; anything else must not pass for an empty one.
        if (!(e instanceof ApiError && e.status === 404)) {
          setLoadError(`Could not load this conversation: ${e.message}`);
        }
      });
    void refreshSessions();
    void refreshEmotions();
    return () => {
      live = false;
    };
  }, [app, sessionId, userId]);

  const liveProgress = useMemo(() => {
    for (const message of [...messages].reverse()) {
      const found = [...message.parts].reverse().find((p) => p.type === "data-protocol-progress");
      if (found) return (found as AnyPart).data as Progress;
    }
    return null;
  }, [messages]);
  const progress = liveProgress ?? restoredProgress;

  const busy = status === "submitted" || status === "streaming";
  const lastAssistant = lastOf(messages)?.role === "assistant" ? lastOf(messages) : undefined;
  const humanFromParts = (lastAssistant?.parts ?? [])
    .map((p) => p as AnyPart)
    .reverse()
    .find(
      (p) => p.type === "data-human-input-needed" || p.type === "data-human-confirmation-needed",
    );
  const human: HumanRequest | null = humanFromParts
    ? humanRequest(humanFromParts.type, humanFromParts.data)
    : transientHuman;

  const send = (text: string, extra?: Record<string, unknown>) => {
    if (!text.trim() || busy) return;
    clearError();
    setLoadError(null);
    setRetries([]);
    setTransientHuman(null);
    const trimmed = text.trim();
    const id = unsent.current?.text === trimmed ? unsent.current.id : undefined;
    unsent.current = null;
    sentHere.current = true;
    replyBegun.current = false;
    const parts = [{ type: "text" as const, text: trimmed }];
    void sendMessage(id ? { id, parts } : { parts }, extra ? { body: extra } : undefined);
  };

  const failure = error
    ? describeError(error)
    : loadError
      ? { text: loadError, busy: false }
      : null;

  // A failed send: take the message back into the composer. Most failures saved nothing; after
  // `commit_outcome_unknown` it may be stored, which a resend with the same id settles. A failed
  // resumed reply only shows its error: the messages before it are stored.
  useEffect(() => {
    if (!error || !sentHere.current) return;
    sentHere.current = false;
    const lastUser = messages.map((m) => m.role).lastIndexOf("user");
    if (lastUser < 0) return;
    const text = messages[lastUser].parts.map((p) => (p.type === "text" ? p.text : "")).join("");
    const takeBack = () => {
      unsent.current = { id: messages[lastUser].id, text };
      setMessages(messages.slice(0, lastUser));
      setDraft((current) => current || text);
    };
    // The connection dropped mid-reply (fetch's TypeError; an `error` part is a plain Error):
    // the server has the message and goes on answering it, on its own. Follow that reply from
    // its start (GET /v1/chat/{id}/stream) instead of offering the message again.
    if (!(error instanceof TypeError && replyBegun.current)) return takeBack();
    setMessages(messages.slice(0, lastUser + 1));
    clearError();
    readSession(picks.current.userId, picks.current.app, sessionId)
      .then(({ session, events }) => {
        if (session.busy) return void resumeStream();
        const stored = eventsToMessages(events);
        const lastStored = [...stored].reverse().find((m) => m.role === "user");
        const storedText = lastStored?.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
        if (storedText === text) return setMessages(stored); // it finished meanwhile
        takeBack(); // it failed meanwhile: nothing was stored
        setLoadError("The connection was lost and the reply was not saved; send it again.");
      })
      .catch((e: Error) => {
        takeBack(); // a resend with the same id never stores it twice
        setLoadError(`The connection was lost: ${e.message}`);
      });
  }, [error]);

  // Keep the newest words in view while they stream.
  const bottom = useRef<HTMLDivElement>(null);
  useEffect(() => {
    bottom.current?.scrollIntoView({ block: "end" });
  }, [messages, status]);

  return (
    <div className="page">
      <header>
        <h1>Confidant</h1>
        <label>
          App
          <select data-testid="app-picker" value={app} onChange={(e) => setApp(e.target.value)}>
            {apps.map((a) => (
              <option key={a.name} value={a.name}>
                {a.title}
              </option>
            ))}
          </select>
        </label>
        {currentApp && currentApp.skills.length > 0 && (
          <label>
            Skill
            <select
              data-testid="skill-picker"
              value={skill}
              onChange={(e) => setSkill(e.target.value)}
            >
              {currentApp.skills.map((s) => (
                <option key={s.id} value={s.id} title={s.description}>
                  {s.title}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          User
          <input
            data-testid="user-id"
            value={userId}
            onChange={(e) => setUserId(e.target.value.replace(/[^\w.@-]/g, ""))}
            size={10}
          />
        </label>
      </header>
      <div className="body">
        <aside>
          <button data-testid="new-session" onClick={() => setSessionId(newSessionId())}>
            + New conversation
          </button>
          <div className="panel-title">Conversations</div>
          <ul className="sessions" data-testid="sessions">
            {sessions.map((s) => (
              <li key={s.id} className={s.id === sessionId ? "current" : ""}>
                <button className="session" onClick={() => setSessionId(s.id)}>
                  {new Date(Number(s.updated_at) * 1000 || s.updated_at).toLocaleString()}
                  <small>
                    {s.event_count} events{s.progress ? ` · ${s.progress.step_name || stageName(s.progress.phase)}` : ""}
                  </small>
                </button>
                <button
                  className="delete"
                  title="Delete this conversation"
                  onClick={async () => {
                    try {
                      await deleteSession(userId, app, s.id);
                    } catch (e) {
                      setLoadError(`Could not delete the conversation: ${(e as Error).message}`);
                      return;
                    }
                    if (s.id === sessionId) setSessionId(newSessionId());
                    void refreshSessions();
                  }}
                >
                  ×
                </button>
              </li>
            ))}
          </ul>
          {currentApp && <p className="app-description">{currentApp.description}</p>}
          {emotions !== null && <EmotionChart emotions={emotions} />}
        </aside>
        <main>
          {progress && <ProgressBar progress={progress} />}
          <div className="messages" data-testid="messages">
            {messages.map((m) => (
              <div key={m.id} className={`message ${m.role}`} data-role={m.role}>
                {m.parts.map((raw, i) => {
                  const part = raw as AnyPart;
                  if (part.type === "text") return <p key={i}>{part.text}</p>;
                  if (toolName(part)) return <ToolCall key={i} part={part} />;
                  if (part.type === "data-crisis") return <CrisisCard key={i} crisis={part.data} />;
                  if (part.type === "data-interrupted")
                    return <InterruptedNote key={i} reason={part.data?.reason} />;
                  return null;
                })}
              </div>
            ))}
            {transientCrisis && <CrisisCard crisis={transientCrisis} />}
            {status === "submitted" && <div className="typing">…</div>}
            <div ref={bottom} />
          </div>
          {retries.length > 0 && (
            <div className="notice" data-testid="retry">
              The model was busy; retry ({lastOf(retries)!.attempt}/
              {lastOf(retries)!.max_retries}) in {lastOf(retries)!.delay_s}s:{" "}
              {lastOf(retries)!.reason}
            </div>
          )}
          {failure && (
            <div className={failure.busy ? "notice busy" : "notice error"} data-testid="error">
              {failure.text}
            </div>
          )}
          {human && !busy && (
            <HumanPrompt
              request={human}
              disabled={busy}
              answer={(text, response) => send(text, { human_response: response })}
            />
          )}
          <form
            className="composer"
            onSubmit={(e) => {
              e.preventDefault();
              send(draft);
              setDraft("");
            }}
          >
            <textarea
              data-testid="composer"
              value={draft}
              placeholder="Say what is on your mind…"
              onChange={(e) => setDraft(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && !e.shiftKey) {
                  e.preventDefault();
                  send(draft);
                  setDraft("");
                }
              }}
            />
            <button data-testid="send" disabled={busy || !draft.trim()}>
              {busy ? "Answering…" : "Send"}
            </button>
          </form>
        </main>
      </div>
    </div>
  );
}
