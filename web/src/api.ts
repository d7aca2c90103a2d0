// Our own REST endpoints (the chat stream goes through useChat's transport instead).

export type Skill = { id: string; title: string; description: string };
export type AppInfo = {
  name: string;
  title: string;
  description: string;
  skills: Skill[];
  default_skill: string | null;
};
// The shared progress vocabulary of every app (agents/protocols/progress.py).
export type Progress = {
  protocol_id: string;
  step: number;
  total_steps: number;
  phase: string;
  progress: number;
  step_name: string;
};
export type SessionInfo = {
  id: string;
  app: string;
  summary: unknown;
  created_at: number | string;
  updated_at: number | string;
  event_count: number;
  busy: boolean;
  progress?: Progress | null;
};
export type AdkPart = {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response?: unknown };
};
export type AdkEvent = {
  seq: number;
  id?: string;
  author: string;
  content?: { role?: string; parts?: AdkPart[] };
  // `interrupted: true` on the reply a newer message stopped (confidant/chat/busy.py).
  customMetadata?: Record<string, unknown>;
};
export type Emotion = {
  user_mood?: unknown;
  other_mood?: unknown;
  trend?: unknown;
  tags?: string[];
  session_id?: string;
  created_at?: number | string;
};

/** A data part the session's paused run ended with (e.g. `data-human-input-needed`). */
export type PausePart = { type: string; data: Record<string, any> };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(userId: string, path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(path, {
    ...init,
    headers: { "X-User-Id": userId, ...(init.headers ?? {}) },
  });
  if (!response.ok) {
    let message = response.statusText;
    try {
      message = (await response.json()).error?.message ?? message;
    } catch {
      // not JSON: keep the status text
    }
    throw new ApiError(response.status, message);
  }
  return response.status === 204 ? (undefined as T) : ((await response.json()) as T);
}

const q = encodeURIComponent;

export const listApps = () =>
  call<{ apps: AppInfo[] }>("", "/v1/apps").then((body) => body.apps);

export const listSessions = (userId: string, app: string) =>
  call<{ sessions: SessionInfo[] }>(userId, `/v1/sessions?app=${q(app)}`).then(
    (body) => body.sessions,
  );

export async function readSession(userId: string, app: string, id: string) {
  const events: AdkEvent[] = [];
  let token: string | null = null;
  let session: SessionInfo | null = null;
  let pauses: PausePart[] = [];
  do {
    const page: {
      session: SessionInfo;
      events: AdkEvent[];
      next_page_token: string | null;
      pauses?: PausePart[];
    } = await call(
        userId,
        `/v1/sessions/${q(id)}?app=${q(app)}&page_size=200` +
          (token ? `&page_token=${q(token)}` : ""),
      );
    session = page.session;
    events.push(...page.events);
    pauses = page.pauses ?? [];
    token = page.next_page_token;
  } while (token);
  return { session: session!, events, pauses };
}

export const deleteSession = (userId: string, app: string, id: string) =>
  call<void>(userId, `/v1/sessions/${q(id)}?app=${q(app)}`, { method: "DELETE" });

/** The emotion trajectory, or null when this server has no such endpoint (404). */
export async function readEmotions(
  userId: string,
  app: string,
  sessionId: string,
): Promise<Emotion[] | null> {
  try {
    const body = await call<{ emotions?: Emotion[]; items?: Emotion[] } | Emotion[]>(
      userId,
      `/v1/me/emotions?app=${q(app)}&session_id=${q(sessionId)}`,
    );
    if (Array.isArray(body)) return body;
    return body.emotions ?? body.items ?? [];
  } catch (error) {
    if (error instanceof ApiError) return null;
    throw error;
  }
}
