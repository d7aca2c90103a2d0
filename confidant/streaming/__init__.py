"""The AI SDK UI message stream, spoken over SSE."""
