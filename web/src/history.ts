// Stored ADK events → AI SDK UI messages, so a restored session looks like a live one.
import type { UIMessage } from "ai";
import type { AdkEvent } from "./api";

type Part = UIMessage["parts"][number];

export function eventsToMessages(events: AdkEvent[]): UIMessage[] {
  const messages: UIMessage[] = [];
  const toolParts = new Map<string, Record<string, unknown>>();
  for (const event of events) {
    const parts = event.content?.parts ?? [];
    const isUser = event.author === "user";
    if (isUser && parts.every((p) => p.functionResponse)) {
      // Tool results come back under the user role: attach them to their call.
      for (const p of parts) attachResult(toolParts, p.functionResponse!);
      if (parts.length) continue;
    }
    const role = isUser ? "user" : "assistant";
    let message = messages[messages.length - 1];
    if (!message || message.role !== role || role === "user") {
      message = { id: `h-${event.seq}`, role, parts: [] };
      messages.push(message);
    }
    for (const p of parts) {
      if (p.text && !p.thought) {
        message.parts.push({ type: "text", text: p.text, state: "done" } as Part);
      } else if (p.functionCall) {
        const id = p.functionCall.id ?? `call-${event.seq}`;
        const part = {
          type: `tool-${p.functionCall.name}`,
          toolCallId: id,
          state: "input-available",
          input: p.functionCall.args ?? {},
        };
        toolParts.set(id, part);
        message.parts.push(part as unknown as Part);
      } else if (p.functionResponse) {
        attachResult(toolParts, p.functionResponse);
      }
    }
    if (!isUser && event.customMetadata?.interrupted) {
      message.parts.push({ type: "data-interrupted", data: { reason: "a newer message" } } as Part);
    }
  }
  return messages.filter((m) => m.parts.length > 0);
}

function attachResult(
  toolParts: Map<string, Record<string, unknown>>,
  response: { id?: string; response?: unknown },
) {
  const part = response.id ? toolParts.get(response.id) : undefined;
  if (part) {
    part.state = "output-available";
    part.output = response.response;
  }
}
