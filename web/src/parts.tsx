// How each UI message stream part looks on the page.
import type { UIMessage } from "ai";
import type { Emotion, Progress } from "./api";

type Part = UIMessage["parts"][number];
type AnyPart = Part & Record<string, any>;

export type CrisisResource = { name: string; phone?: string; url?: string };
export type Crisis = { locale?: string; resources?: CrisisResource[]; signals?: unknown };
export type HumanRequest = {
  kind: "input" | "confirmation";
  data: Record<string, any>;
};
export type Answer = (text: string, humanResponse: Record<string, unknown>) => void;

export function toolName(part: AnyPart): string | null {
  if (part.type === "dynamic-tool") return part.toolName;
  return part.type.startsWith("tool-") ? part.type.slice("tool-".length) : null;
}

export function ToolCall({ part }: { part: AnyPart }) {
  const done = part.state === "output-available";
  return (
    <details className="tool" data-testid="tool-call">
      <summary>
        <span className="tool-icon">{done ? "✓" : "…"}</span> {toolName(part)}
      </summary>
      <pre>{JSON.stringify(part.input ?? {}, null, 2)}</pre>
      {done && <pre className="tool-output">{JSON.stringify(part.output, null, 2)}</pre>}
    </details>
  );
}

export function CrisisCard({ crisis }: { crisis: Crisis }) {
  const resources = crisis.resources ?? [];
  if (!resources.length) return null;
  return (
    <div className="crisis" role="alert" data-testid="crisis">
      <div className="crisis-title">
        {crisis.locale === "zh" ? "现在就可以联系的人" : "People you can reach right now"}
      </div>
      <div className="crisis-buttons">
        {resources.map((r, i) => (
          <span key={i}>
            {r.phone ? (
              <a className="call" href={`tel:${r.phone.replace(/[^\d+]/g, "")}`}>
                Call {r.name} <b>{r.phone}</b>
              </a>
            ) : null}
            {r.url ? (
              <a className="call link" href={r.url} target="_blank" rel="noreferrer">
                {r.phone ? "Website" : r.name}
              </a>
            ) : null}
          </span>
        ))}
      </div>
    </div>
  );
}

/** `data-interrupted` `{reason, kept}`: a newer message stopped this reply; what it had
 * streamed is stored as the reply. */
export function InterruptedNote({ reason }: { reason?: string }) {
  return (
    <p className="interrupted" data-testid="interrupted">
      Stopped here: {reason || "a newer message"} came in.
    </p>
  );
}

// The pause parts' payloads (agents/taskflow/human_loop.py): `data-human-input-needed`
// `{callId, question, missing, feedback}`, `data-human-confirmation-needed`
// `{callId, kind, summary, classification, task?}`.
function promptOf(data: Record<string, any>): string {
  return data.question || data.summary || "Your answer is needed";
}

export function HumanPrompt({
  request,
  answer,
  disabled,
}: {
  request: HumanRequest;
  answer: Answer;
  disabled: boolean;
}) {
  const { kind, data } = request;
  // The chat body's `human_response` (agents/taskflow/schemas.py HumanResponse): the paused
  // call's id, then `approved` for a confirmation or `answer` for missing details.
  const base = data.callId ? { call_id: data.callId } : {};
  if (kind === "confirmation") {
    return (
      <div className="human" data-testid="human-prompt">
        <div>{promptOf(data)}</div>
        {data.task ? <pre>{JSON.stringify(data.task, null, 2)}</pre> : null}
        <button disabled={disabled} onClick={() => answer("Yes", { ...base, approved: true })}>
          Confirm
        </button>
        <button disabled={disabled} onClick={() => answer("No", { ...base, approved: false })}>
          Decline
        </button>
      </div>
    );
  }
  return (
    <form
      className="human"
      data-testid="human-prompt"
      onSubmit={(e) => {
        e.preventDefault();
        const field = e.currentTarget.elements.namedItem("answer") as HTMLInputElement;
        if (field.value.trim()) answer(field.value.trim(), { ...base, answer: field.value.trim() });
      }}
    >
      <label>
        {promptOf(data)}
        <input name="answer" disabled={disabled} autoComplete="off" />
      </label>
      <button disabled={disabled}>Answer</button>
    </form>
  );
}

/** "stage_2_integration" → "integration" */
export function stageName(stage: string): string {
  return stage.replace(/^stage_\d+_/, "").replace(/_/g, " ");
}

export function ProgressBar({ progress }: { progress: Progress }) {
  return (
    <div className="progress" data-testid="progress">
      <div className="progress-label">
        {progress.protocol_id}: <b>{progress.step_name || stageName(progress.phase)}</b> (
        {progress.step}/{progress.total_steps})
      </div>
      <div className="progress-track">
        <div
          className="progress-fill"
          style={{ width: `${(100 * progress.step) / Math.max(progress.total_steps, 1)}%` }}
        />
      </div>
    </div>
  );
}

function moodValue(mood: unknown): number | null {
  if (typeof mood === "number") return mood;
  if (mood && typeof mood === "object") {
    const m = mood as Record<string, unknown>;
    for (const key of ["score", "valence", "intensity", "value"]) {
      if (typeof m[key] === "number") return m[key] as number;
    }
  }
  return null;
}

function moodLabel(mood: unknown): string {
  if (typeof mood === "string") return mood;
  if (mood && typeof mood === "object") {
    const m = mood as Record<string, unknown>;
    return String(m.label ?? m.name ?? m.emotion ?? "");
  }
  return "";
}

export function EmotionChart({ emotions }: { emotions: Emotion[] }) {
  if (!emotions.length) return null;
  const values = emotions.map((e) => moodValue(e.user_mood));
  const numeric = values.filter((v): v is number => v !== null);
  const width = 260;
  const height = 80;
  const lo = Math.min(...numeric, 0);
  const hi = Math.max(...numeric, 1);
  const x = (i: number) => (emotions.length === 1 ? width / 2 : (i * width) / (emotions.length - 1));
  const y = (v: number) => height - 8 - ((v - lo) / (hi - lo || 1)) * (height - 16);
  const points = values
    .map((v, i) => (v === null ? null : `${x(i)},${y(v)}`))
    .filter(Boolean)
    .join(" ");
  return (
    <div className="emotions" data-testid="emotion-chart">
      <div className="panel-title">Emotion trajectory</div>
      {numeric.length > 0 && (
        <svg width={width} height={height} viewBox={`0 0 ${width} ${height}`}>
          <polyline points={points} fill="none" stroke="#6b5bd2" strokeWidth="2" />
          {values.map((v, i) =>
            v === null ? null : <circle key={i} cx={x(i)} cy={y(v)} r="3" fill="#6b5bd2" />,
          )}
        </svg>
      )}
      <div className="mood-labels">
        {emotions.map((e, i) => (
          <span key={i} className="mood">
            {moodLabel(e.user_mood) || (e.tags ?? []).join(", ") || String(values[i] ?? "")}
          </span>
        ))}
      </div>
    </div>
  );
}
