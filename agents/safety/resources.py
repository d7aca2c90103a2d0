"""The fixed crisis reply and the helplines per locale (`data/crisis_replies.json`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from agents.safety.normalise import DATA_DIR, contains_cjk

REPLIES_FILE = "crisis_replies.json"
SUPPORTED_LOCALES: tuple[str, ...] = ("zh", "en")  # conversation languages of the apps
FALLBACK_LOCALE = "en"


@dataclass(frozen=True)
class LocaleResources:
    locale: str
    reply: str
    resources: tuple[dict[str, str], ...]  # {name, phone, url?}


@cache
def load_resources(data_dir: Path = DATA_DIR) -> dict[str, LocaleResources]:
    raw = json.loads((data_dir / REPLIES_FILE).read_text(encoding="utf-8"))
    loaded = {
        locale: LocaleResources(
            locale=locale,
            reply=str(entry["reply"]),
            resources=tuple(
                {key: str(item[key]) for key in ("name", "phone", "url") if key in item}
                for item in entry["resources"]
            ),
        )
        for locale, entry in raw.items()
    }
    missing = [locale for locale in SUPPORTED_LOCALES if locale not in loaded]
    if missing:
        raise ValueError(f"{REPLIES_FILE} lacks a reply for {missing}")
    return loaded


def base_language(locale: object) -> str | None:
    """The base language of a locale tag (zh-CN -> zh), lower case; None when not a tag."""
    if not isinstance(locale, str) or not locale.strip():
        return None
    return locale.strip().lower().replace("_", "-").split("-")[0]


def normalise_locale(locale: object) -> str | None:
    """Base language of a locale tag (zh-CN -> zh); None when unsupported."""
    base = base_language(locale)
    return base if base in SUPPORTED_LOCALES else None


def reply_locale(preferred: object, text: str) -> str:
    """The session's locale when supported, else guessed from the message's script."""
    return normalise_locale(preferred) or ("zh" if contains_cjk(text) else FALLBACK_LOCALE)


def crisis_reply(locale: object) -> str:
    """The fixed crisis reply (with helplines) for `locale`; English when it has none."""
    resources = load_resources()
    return resources.get(base_language(locale) or "", resources[FALLBACK_LOCALE]).reply


def crisis_payload(locale: object, signals: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """The `data-crisis` stream part's data: helplines for `locale` so an app can show call
    buttons; a locale with no list gets the English one and says so."""
    requested = base_language(locale)
    resolved = requested if requested in load_resources() else FALLBACK_LOCALE
    payload: dict[str, Any] = {
        "locale": resolved,
        "resources": [dict(item) for item in load_resources()[resolved].resources],
        "signals": list(signals),
    }
    if requested != resolved:
        payload["requested_locale"] = requested
        payload["fallback"] = True
        payload["note"] = (
            f"No helpline list for locale {requested!r}; showing the {resolved!r} list."
        )
    return payload
