"""Text embeddings behind the `Embedder` port (confidant/ports.py): offline hashed features
for the embedded default; Vertex AI through google-genai in the cloud (confidant/embeddings/
vertex.py, imported only when configured)."""

from confidant.embeddings.hashed import HashedEmbedder

__all__ = ["HashedEmbedder"]
