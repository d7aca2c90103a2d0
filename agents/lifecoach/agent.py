"""The lifecoach app: one core agent serving the skill the request names.

The core agent is generic: its instruction is the skill's fragment plus what the routing layer
(agents/protocols/routing.py) says about the protocol in progress, and its tools are the ones
the skill's manifest lists. Skills are folders under `skills/`; a new folder is a new skill.
"""

from __future__ import annotations

from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext

from agents.deps import AgentDeps, TurnContext
from agents.lifecoach import prompts
from agents.protocols.engine import ProtocolRunner
from agents.protocols.routing import ProtocolRouting
from agents.safety import LOCALE_STATE_KEY
from agents.safety.detector import normalise_locale
from agents.skills import SkillManifest, ToolEnv, build_tools, load_skills
from confidant.profiles.draft import ProfileDraft
from confidant.profiles.model import META
from confidant.profiles.source import PROFILE

APP_NAME = "lifecoach"
ROOT_AGENT_NAME = "lifecoach_core"
SKILLS_DIR = Path(__file__).parent / "skills"
SKILLS: dict[str, SkillManifest] = load_skills(SKILLS_DIR)
DEFAULT_SKILL = "lifecoach"


def skill_of(turn: TurnContext) -> SkillManifest:
    return SKILLS[turn.options.get("skill") or DEFAULT_SKILL]


def render_instruction(
    manifest: SkillManifest,
    draft: ProfileDraft,
    routing: ProtocolRouting | None,
    language: str,
) -> str:
    """The core agent's instruction (pure, so it is easy to test)."""
    stored = sorted(k for k in draft.skill(manifest.id) if k != META)
    sections = [
        prompts.CORE,
        f"{prompts.SKILL_MARKER}: {manifest.id}",
        f"{prompts.LANGUAGE_MARKER}: {language}",
        manifest.instruction.strip(),
        prompts.STATE_RULES.format(
            sections=", ".join(manifest.sections) or "(free)",
            stored=", ".join(stored) or "nothing yet",
        ),
    ]
    if routing is not None:
        sections.append(routing.prompt())
    return "\n\n".join(sections)


class CoreInstruction:
    """Re-rendered on every model call: a tool's write shows in the very next call."""

    def __init__(
        self,
        manifest: SkillManifest,
        draft: ProfileDraft,
        routing: ProtocolRouting | None,
        turn: TurnContext,
    ) -> None:
        self._manifest, self._draft, self._routing, self._turn = manifest, draft, routing, turn

    async def __call__(self, context: ReadonlyContext) -> str:
        language = (
            normalise_locale(context.state.get(LOCALE_STATE_KEY))
            or normalise_locale(self._turn.locale)
            or "en"
        )
        return render_instruction(self._manifest, self._draft, self._routing, language)


def build_lifecoach_root(deps: AgentDeps, turn: TurnContext) -> LlmAgent:
    """A fresh tree for one request: route the protocol, then the generic core agent."""
    manifest = skill_of(turn)
    draft = turn.loaded.get(PROFILE)
    if not isinstance(draft, ProfileDraft):
        # A tree built outside a chat turn (warm-up, checks): an empty draft nobody commits.
        draft = ProfileDraft({})
    runner = routing = None
    if manifest.loaded_protocols:
        runner = ProtocolRunner(
            draft, manifest.id, manifest.loaded_protocols, timeout_s=deps.protocol_timeout_s
        )
        routing = ProtocolRouting(runner, turn.data_parts)
        routing.begin_turn(turn.options.get("protocol_action"))
    env = ToolEnv(skill_id=manifest.id, draft=draft, data_parts=turn.data_parts, protocols=runner)
    return LlmAgent(
        name=ROOT_AGENT_NAME,
        description=f"Core coach serving the {manifest.id} skill.",
        model=deps.model,
        instruction=CoreInstruction(manifest, draft, routing, turn),
        tools=build_tools(manifest.tools, env),
        disallow_transfer_to_parent=True,
        disallow_transfer_to_peers=True,
    )
