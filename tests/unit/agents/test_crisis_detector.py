"""The crisis detector: the development set, normalisation, combination and hold-back rules."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agents.safety import CrisisDetector, crisis_payload, crisis_reply, load_lexicons
from agents.safety.detector import normalise_locale
from agents.safety.lexicon import STRONG_SIGNALS, parse_lexicon
from agents.safety.ngram import load_model
from agents.safety.normalise import normalise
from agents.safety.resources import reply_locale

DEV_SET = Path(__file__).resolve().parents[2] / "data" / "crisis_dev_set.jsonl"
RISKY_SIGNALS = {
    "explicit_intent",
    "passive_ideation",
    "burden",
    "means_plan",
    "plan",
    "farewell",
    "self_harm",
    "slang",
    "obfuscation",
}


@pytest.fixture(scope="module")
def detector() -> CrisisDetector:
    return CrisisDetector()


@pytest.fixture(scope="module")
def cases() -> list[dict]:
    return [json.loads(line) for line in DEV_SET.read_text(encoding="utf-8").splitlines()]


def test_the_development_set_is_balanced_and_covers_every_signal(cases: list[dict]) -> None:
    assert len(cases) >= 400
    assert len({case["text"] for case in cases}) == len(cases)  # no duplicates
    by_lang = Counter(case["lang"] for case in cases)
    assert by_lang["zh"] >= 200 and by_lang["en"] >= 200
    risky = [case for case in cases if case["risky"]]
    assert 0.4 <= len(risky) / len(cases) <= 0.65  # about half
    for lang in ("zh", "en"):
        assert {c["signal"] for c in risky if c["lang"] == lang} == RISKY_SIGNALS


def test_every_risky_case_fires(detector: CrisisDetector, cases: list[dict]) -> None:
    missed = [c["text"] for c in cases if c["risky"] and not detector.detect(c["text"]).risky]
    assert missed == []


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_false_alarms_stay_at_or_under_two_percent(
    detector: CrisisDetector, cases: list[dict], lang: str
) -> None:
    benign = [c["text"] for c in cases if not c["risky"] and c["lang"] == lang]
    fired = [text for text in benign if detector.detect(text).risky]
    assert len(fired) <= 0.02 * len(benign), fired


@pytest.mark.parametrize(
    ("message", "view"),
    [
        ("ｋｉｌｌ ｍｙｓｅｌｆ", "kill myself"),  # full width
        ("KILL-MY-SELF", "kill my self"),
        ("s.u.i.c.i.d.e", "suicide"),
        ("kill\u200bmyself", "killmyself"),  # zero-width space
        ("k!ll mys3lf", "kill myself"),  # leetspeak
        ("su1c1de", "suicide"),
        ("i w a n t  t o  d i e", "i want to die"),  # split letters joined
        ("I wanna diiiie", "i wanna die"),  # repeated letters
        ("💊💊 tonight", "pills pills tonight"),  # emoji stand-ins
        ("gonna 🌉 tonight", "gonna jump tonight"),  # a place emoji after a wish is the act
        ("the 🚆 was late", "the train was late"),
        ("想跳 🏢", "想跳楼"),  # in Chinese, the Chinese word
        ("lmao 💀", "lmao"),  # 💀 stands for nothing
        ("wǒ xiǎng sǐ", "wo xiang si"),  # pinyin tone marks
        ("想歹匕", "想死"),  # a character split into its parts
        ("iwanttodie", "i want to die"),  # glued words
        ("kіll муself, мир", "kill myself | мир"),  # homoglyphs, only in words mixing scripts
        ("want 2 go", "want to go"),
        ("ImGonnaKillMyself", "im gonna kill myself"),
        ("deadline lifestyle notwithstanding", "deadline lifestyle notwithstanding"),
        ("I don't", "i dont"),
        ("我想 自-殺", "我想自杀"),  # spacing, punctuation, traditional
        ("我不想活了，真的", "我不想活了|真的"),  # clause ends kept
    ],
)
def test_normalisation(message: str, view: str) -> None:
    assert normalise(message) == view


def test_detect_explains_the_verdict_with_signals_and_spans(detector: CrisisDetector) -> None:
    detection = detector.detect(
        "I've saved up a bottle of sleeping pills. Thank you for everything"
    )
    assert detection.risky
    assert "means_plan" in detection.signals
    for match in detection.matches:
        assert detection.view[match.start : match.end] == match.text
    assert detector.detect("我攒了一瓶安眠药").signals == ("means_plan",)


@pytest.mark.parametrize(
    "message",
    [
        "these pills are huge",  # a means word alone is not a crisis
        "we walked over the bridge downtown",
        "这个药太苦了",
        "I bought some pills for my headache",  # possession, with an everyday purpose
    ],
)
def test_a_means_word_alone_does_not_fire(detector: CrisisDetector, message: str) -> None:
    assert not detector.detect(message).risky


@pytest.mark.parametrize(
    "message",
    [
        "I've been hoarding my pills",
        "got a rope, I know what it's for",
        "我在网上买了百草枯",
        "刀片藏在枕头底下",
    ],
)
def test_a_means_word_with_access_or_intent_fires(detector: CrisisDetector, message: str) -> None:
    assert detector.detect(message).signals == ("means_plan",)


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("I'm not suicidal, just tired", "negated"),
        ("我不想死，只是好累", "negated"),
        ("In the last chapter she says she is ready to die", "third_person"),
        ("主角最后跳楼了", "third_person"),
        ("Durkheim's theory of suicide for my sociology essay", "context"),
        ("我在写一篇关于自杀预防的论文", "benign"),
        ("I'm killing myself laughing", "benign"),
        ("I jumped off the cliff in the game", "benign"),
        ("吃鸡的时候从楼顶跳下去了", "game"),
        # What others believe of someone else is their story, not the speaker's cover.
        ("我同事把猫送人了，东西也分了，大家都以为她是要辞职", "purpose"),
        # Telling someone of the errand is no cover.
        ("I told my wife I bought the charcoal for the barbecue tonight", "purpose"),
        ("i got the rope for moving, told my brother to come help", "purpose"),
        # The event still explains a goodbye before it and an act told as done.
        ("出国前把银行卡和钥匙都交给我姐了", "purpose"),
        ("下班后一直在想今天收的那个吞药的女孩", "purpose"),
        ("考完试那天我们从跳台上跳下去了，太爽了", "purpose"),
        # A clause that opens with a report is said by whoever the clause before is about.
        ("我女儿在学校被同学孤立，回家说不想活了，我该怎么帮她", "third_person"),
        ("我儿子最近不爱说话，昨天突然说活着没意思", "third_person"),
        ("my flatmate came home crying, kept saying life isn't worth living", "third_person"),
        # The speaker who is told ("跟我说") is no subject of what is told.
        ("我儿子最近不爱说话，昨天突然跟我说活着没意思", "third_person"),
        ("我女儿放学回来，哭着对我说不想活了", "third_person"),
        # Bought once, as the doctor said: still an everyday purpose.
        ("去药店买了一盒安眠药，医生说失眠的时候吃一片", "purpose"),
        (
            "bought a box of sleeping pills at the pharmacy, the doctor said one before bed",
            "purpose",
        ),
        # Hoarded once, handed over since: a recovery story.
        ("三年前我在药店攒了一堆安眠药，后来全都交给了医生", "past"),
        # "自己" is the subject's self: after a third person it is theirs.
        ("朋友说她想割自己，我陪她聊了一晚上，明天我该怎么做", "third_person"),
        ("室友总是划自己，我该怎么劝她", "third_person"),
        ("同事说他有时候会掐自己，这正常吗", "third_person"),
        # A quotation after a reporting word is said by the word's subject.
        (
            'My husband said "maybe you\'d all be better off without me" and then said he was'
            " joking.",
            "third_person",
        ),
        (
            'my student wrote: "i want to die" in the margin of her homework. how do i bring it'
            " up?",
            "third_person",
        ),
        ("我最好的朋友最近说了很多“我是你们的负担”“你们没有我会更好”之类的话", "third_person"),
        ("我表弟跟我说“要是我死了他们会不会后悔”，他才12岁，我该怎么跟他爸妈说", "third_person"),
        # A report that opens its clause is said by whoever the clause before is about.
        ("我爷爷八十多了，最近总说“活这么久干嘛，拖累你们”，我该怎么回应他", "third_person"),
        (
            'My boyfriend texted me "I\'m sorry for everything, you deserve better" and now his'
            " phone is off.",
            "third_person",
        ),
        (
            "My older brother said tonight \"I'm not going to be a problem for you guys much"
            ' longer" and went to bed. Should I wake my parents?',
            "third_person",
        ),
        # "my online friend", "my little sister": a third person too.
        (
            "i think my online friend is self harming, she keeps posting pics with bandages."
            " should i tell my parents",
            "third_person",
        ),
    ],
)
def test_what_is_held_back_says_why(detector: CrisisDetector, message: str, reason: str) -> None:
    _assert_held_back(detector, message, reason)


def _assert_held_back(detector: CrisisDetector, message: str, reason: str) -> None:
    detection = detector.detect(message)
    assert not detection.risky
    assert reason in {why for _, why in detection.held_back}


def _assert_held_back_then_fires(
    detector: CrisisDetector, held: str, fires: str, reason: str
) -> None:
    """`held` is held back for `reason`; `fires`, its variant without what explained it, fires."""
    _assert_held_back(detector, held, reason)
    assert detector.detect(fires).risky


@pytest.mark.parametrize(
    ("history", "back_now"),
    [
        # A time that is over frames its clause and the next; "again", "still", "this time",
        # "tonight", a plan now, 又, 这次 say it is back, and then it fires.
        (
            "In high school I used to cut my thighs where nobody could see. The scars are faded.",
            "In high school I used to cut my thighs. Last night I did it again.",
        ),
        (
            "I burned myself with lighters when I was 14. I'm a nurse on a burns ward now.",
            "I burned myself with lighters when I was 14. This time I'm using something else.",
        ),
        (
            "Back in college I believed my parents would be better off without me.",
            "Back in college I believed my parents would be better off without me. I still do.",
        ),
        (
            "初中的时候我会用圆规扎自己，现在在学校心理社做志愿者",
            "初中的时候我会用圆规扎自己，最近又开始了",
        ),
        (
            "两年前我觉得没有我他们会更好，后来去看了医生，现在跟爸妈关系也好了",
            "两年前我觉得没有我他们会更好，这次我已经想好了",
        ),
        # A school year is a time that is over; a scar that is still there is no risk that is;
        # 我想过 is history, not a wish now.
        (
            "大二那年我割过手腕，疤还在，但我已经毕业工作了",
            "大二那年我割过手腕，疤还在，最近又割了",
        ),
        ("以前我想过死，现在好了，已经毕业工作了", "以前我想过死，我想死"),
        # The self of back then ("以前的我", "那时候的自己") is a time that is over; "以前的药" is
        # not (the pills may still be there).
        ("那时候的自己一遍遍想着割腕", "那时候的自己一遍遍想着割腕，最近又开始了"),
        (
            "以前的我觉得大家没有我会更好，后来慢慢学会了求助",
            "以前的我觉得大家没有我会更好，现在也这么觉得",
        ),
        # An age at the act, "it's been a decade since", "I was 14 when" are times that are over.
        (
            "I tried to hang myself at 13. I'm 45 and teach maths.",
            "I tried to hang myself at 13. I'm 45 and I'm going to try again.",
        ),
        (
            "It's been a decade since I last hurt myself.",
            "It's been a decade since I last hurt myself, and tonight I did it again.",
        ),
        (
            "I was 14 when I first hurt myself and 26 when I stopped.",
            "I was 14 when I first hurt myself and I still do it.",
        ),
        # Years without the act is recovery told as a time.
        (
            "I haven't hurt myself in 4 years and I'm proud of that.",
            "I haven't hurt myself in 4 years but last night I did it again",
        ),
    ],
)
def test_risk_told_in_the_past_is_history_unless_it_is_back(
    detector: CrisisDetector, history: str, back_now: str
) -> None:
    _assert_held_back_then_fires(detector, history, back_now, "past")


@pytest.mark.parametrize(
    ("history", "now"),
    [
        # "Every day" after a past time in its clause is how often it was then, not a sign it
        # is back; said in a clause of its own, it is now.
        ("高三那年我每天晚上都想死，后来考上了大学", "高三那年还好，现在每天晚上都想死"),
        (
            "Back then I thought about killing myself every night. It took years to climb out.",
            "Back then I was fine. These days I think about killing myself every night.",
        ),
        # "Now" between the past time and the match: the match is of now.
        ("大学的时候我也想过跳楼", "大学的时候我也想过跳楼，如今真想跳楼了"),
        (
            "Back in school I joked about wanting to kill myself.",
            "Back in school I joked about wanting to kill myself, now I actually want to kill"
            " myself",
        ),
    ],
)
def test_how_often_it_was_is_history_and_now_after_a_past_time_is_not(
    detector: CrisisDetector, history: str, now: str
) -> None:
    _assert_held_back_then_fires(detector, history, now, "past")


@pytest.mark.parametrize(
    ("story", "not_over"),
    [
        # A time that is over and a good present after it: a recovery story, however far the
        # risk is from the time, and "every day" or "today" in it is history or the good
        # present. A relapse ("again", 又, 复发, 再试), a clause that says now and names no
        # time that is over, or a risk said after the good present is not over.
        (
            "五年前我因为抑郁住院|那段时间每天都想死|出院以后我坚持吃药|做咨询|慢慢开始工作|交朋友"
            "|上个月我结婚了|现在过得很好",
            "五年前我因为抑郁住院|那段时间每天都想死|出院以后我坚持吃药|做咨询|慢慢开始工作|交朋友"
            "|上个月我结婚了|最近又想死了",
        ),
        (
            "以前我觉得活着没意义|吞过一瓶药|现在我在一家面包店上班|每天早上都期待开烤箱",
            "以前我觉得活着没意义|吞过一瓶药|现在我在一家面包店上班|可是我今天又吞了一瓶",
        ),
        (
            "我是自杀幸存者，当年被救回来，今天是我重生三周年",
            "我是自杀幸存者，当年被救回来，可这些年一直想再试一次",
        ),
        (
            "two years ago i tried to kill myself. my mum found me in time. today i got my degree",
            "two years ago i tried to kill myself. today i got my degree. i want to kill myself",
        ),
        (
            "In 2019 I lost my job. My marriage ended. I wanted to die. My brother took me to a"
            " doctor. Life is good now.",
            "In 2019 I lost my job. My marriage ended. I wanted to die. My brother took me to a"
            " doctor. Life is good now. I relapsed last week.",
        ),
        # Where the speaker is now is no good present ("now I'm at the bridge").
        (
            "Years ago my dad left. My mum drank. I wanted to die. Now I'm a nurse.",
            "Years ago my dad left. My mum drank. I wanted to die. Now I'm at the bridge.",
        ),
        # The pills and the goodbye letters of back then are history in a recovery story too.
        (
            "5 years ago I gave away my books and my cat because I didn't plan to be here. Last"
            " month I got him back and I'm so grateful we both made it.",
            "5 years ago I gave away my books and my cat. Last month I got him back. This time I"
            " gave him to my sister because I don't plan to be here.",
        ),
        (
            "when i was 15 i wanted to die every day. im 24 now and doing a social work degree",
            "kms thoughts on loop since friday. when i was 15 i wanted to die every day. im 24 now",
        ),
        # A season that is over frames a story ("last spring").
        (
            "Last spring I wrote goodbye letters to everyone. I got help and I'm doing so much"
            " better now.",
            "Last spring I wrote goodbye letters to everyone. I got help and I'm doing so much"
            " better now. This week I wrote new goodbye letters.",
        ),
        # An age now is a good present ("现在三十一了").
        (
            "十九岁那年我吞过一瓶药，现在三十一了，过得挺好",
            "十九岁那年我吞过一瓶药，现在三十一了，又吞了一瓶",
        ),
        # A time over in a story only ("last year", "去年"): with a good present it frames one.
        (
            "去年我每天都想死，后来慢慢好起来了，现在在一家书店上班",
            "去年我每天都想死，后来好了一阵，现在又想死了",
        ),
        (
            "last year i wanted to kill myself every night. i got help and i'm doing so much"
            " better now",
            "last year i wanted to kill myself every night. i got help and i'm doing so much"
            " better now. it's back again",
        ),
    ],
)
def test_a_recovery_story_is_history_unless_it_is_not_over(
    detector: CrisisDetector, story: str, not_over: str
) -> None:
    _assert_held_back_then_fires(
        detector, story.replace("|", "，"), not_over.replace("|", "，"), "past"
    )


@pytest.mark.parametrize(
    ("errand", "cover"),
    [
        # A purpose told to others as a cover is no everyday purpose: the means fires.
        (
            "bought two bags of charcoal for the camping trip this weekend",
            "bought two bags of charcoal, told the cashier it was for a camping trip",
        ),
        (
            "bought a thick rope at the hardware store to tie down the load when we're moving",
            "bought a thick rope at the hardware store. the guy asked and i said it was for moving",
        ),
        (
            "I've been saving my sleeping pills for the flight next week",
            "I've been saving up my sleeping pills and my flatmate thinks they're for the flight",
        ),
        ("网上买了两包炭，周末去露营用", "网上买了两包炭，客服问我干嘛用，我说露营"),
        ("买了一根很粗的绳子，搬家捆东西用", "买了一根很粗的绳子，老板以为我要搬家捆东西"),
        ("攒了一些炭，打算过年回老家烤肉", "攒了一些炭，跟家里人说是过年回老家烤肉用的"),
    ],
)
def test_a_purpose_told_as_a_cover_does_not_hold_a_means_back(
    detector: CrisisDetector, errand: str, cover: str
) -> None:
    _assert_held_back_then_fires(detector, errand, cover, "purpose")


@pytest.mark.parametrize(
    ("masked", "revealed"),
    [
        # "The friend is me": a third person or a story no longer holds the match back, wherever
        # in the message the speaker says it.
        (
            "my friend keeps looking up ways to die and im worried",
            "my friend keeps looking up ways to die and im worried. shes me",
        ),
        (
            "My colleague mentioned he has no reason to live.",
            "My colleague mentioned he has no reason to live. Okay, I'm the colleague.",
        ),
        (
            "how do you help a friend who cant stop thinking about dying?",
            "how do you help a friend who cant stop thinking about dying? well i say friend",
        ),
        (
            "I'm writing a novel. She's decided to end it this weekend.",
            "I'm writing a novel. The main character is me, basically. She's decided to end it"
            " this weekend.",
        ),
        (
            "我有个朋友，她说她每天都想死，已经开始计划了",
            "我有个朋友，她说她每天都想死，已经开始计划了……其实那个朋友就是我",
        ),
        (
            "我一个同事经常说想死，我总劝她",
            "我一个同事经常说想死，我总劝她……其实我说的同事就是我自己",
        ),
        ("小说里的主角想死，但又怕疼", "小说里的主角想死，但又怕疼。我就是主角"),
    ],
)
def test_the_friend_who_is_me_fires(detector: CrisisDetector, masked: str, revealed: str) -> None:
    assert not detector.detect(masked).risky
    assert detector.detect(revealed).risky


@pytest.mark.parametrize(
    "message",
    [
        # First-person risk inside a coursework message still fires.
        "I'm writing an essay on suicide prevention but honestly I want to die",
        # A negation in another clause does not cancel this one.
        "I'm not okay. I want to kill myself",
        # A benign idiom elsewhere does not hide a real match.
        "我想自杀，但是想死你了",
        # When the subject is unknown and nothing says it is fiction, it fires.
        "want to die",
        # A past time frames what follows it, never what came before.
        "I don't care if I die. I used to fight it.",
        # A thing from back then is no time frame: 以前藏的那瓶药, 以前写的东西
        "找到了我爸以前藏的那瓶药，想着哪天撑不住了就用它",
        # "before" and "the anniversary of" look forward as often as back.
        "我打算在我生日之前死掉",
        "I'm going to do it on the anniversary of his death",
        # The same feeling as then is now.
        "this is the same feeling as the night i tried at 17. i'm scared of what i'll do",
        # Months without something else is no recovery.
        "I haven't eaten in 2 months and I want to kill myself",
        # A farewell is an act of now, whenever the friendship was.
        "you were my favourite person in high school and I'm sorry for everything. goodbye",
        # An everyday event said as the time of an act to come is no purpose of the act.
        "after the wedding on saturday im going to jump off the bridge",
        "once my sisters party is over im gonna hang myself in the garage",
        "等婚礼办完，我就去跳江",
        "下班后我会去那座桥上跳下去",
        # Without a report, someone named in the clause before is no subject of the speaker's
        # own words.
        "同事们都下班了，办公室只剩我，不想活了",
        "室友出去了，终于可以哭出来了，活着好累",
        "my roommate is out tonight. life isn't worth living",
        # The speaker who tells is the subject.
        "我跟我妈说我不想活了",
        "我跟她说，我真的不想活了",
        # Means gathered over time: the pharmacy or the doctor is where they came from, not
        # what they are for.
        "医院开的药我都没吃，全存起来了，已经有一大袋",
        "跑了三家药店，每家买一盒安眠药",
        "been stockpiling my sleeping pills every time i go to the pharmacy",
        # With the speaker in the clause, or no one before it, "自己" is the speaker.
        "她不知道我今晚就要结束自己",
        "室友出去了，又想割自己",
        "好想割自己",
        # WeChat Moments (朋友圈) is where the speaker posts, not a friend.
        "朋友圈里发了一句不想活了，删了又发",
        "我在朋友圈发了最后一条，然后把朋友圈关了，大家再见",
        # A story's time alone frames nothing, and a duration is not over.
        "去年我每天都想死",
        "I haven't told him I won't be here next summer. I've been thinking about it for a long"
        " time. I look forward to it being over",
        "i've been in therapy for years for the suicidal thoughts. it helped for a while but this"
        " month it's back to every night",
        # Means gathered by someone named by relation are theirs only when the clause is about
        # them alone, they act, and the speaker does not say the other is them.
        "偷偷拿了爸爸的剃须刀片",  # the father owns the blades; the speaker took them
        "我妹妹不知道我在囤药",
        "我发现我老婆不知道我在偷偷存药",  # the speaker who perceives is also the one hoarding
        "I noticed my roommate found my stash of pills",
        "有个朋友在攒安眠药，我该怎么办",  # "a friend" may be the speaker
        "my roommate found my blades and thinks they're hers. they're mine, from this week",
        "my mum has terminal cancer and there's a whole box of oramorph and fentanyl patches at"
        " her house. when she goes i'm taking them. i've already worked out how much i'd need",
        "My partner says she can't go on and has hidden pills. How do I help her? ...I lied,"
        " there is no partner. I'm the one with the pills.",
        # The speaker's own words quoted, words outside the quotation, a quotation no one is
        # said to say: the speaker's.
        "我跟我妈妈说“我不想活了”",
        "我妈说“你去死吧”，我真的不想活了",
        "“我不想活了”，这是我今天在日记里写的",
        'I told her "I can\'t do this anymore, I want to die"',
        'i texted my sister "i want to die" and she hasn\'t replied',
        "我给闺蜜发了一句“我撑不下去了，想死”，然后把手机关了",
        'i texted my sister "i have the pills in front of me" and turned my phone off',
    ],
)
def test_when_unsure_it_fires(detector: CrisisDetector, message: str) -> None:
    assert detector.detect(message).risky


@pytest.mark.parametrize("with_model", [False, True])
def test_a_lone_surrogate_neither_breaks_nor_hides_a_crisis(with_model: bool) -> None:
    # JSON can spell half of a UTF-16 pair ("\\ud83d"); such a message still gets its verdict.
    detector = CrisisDetector(model=load_model() if with_model else None)
    assert detector.detect("\ud83d I want to kill myself tonight \udfff").risky
    assert detector.detect("我想自杀\ud83d").risky
    assert not detector.detect("\udfff\udfff\udfff see you at lunch \ud83d").risky
    # a pair spelled as two halves is the character it spells
    assert normalise("ok \ud83d\ude00") == normalise("ok \U0001f600")


def test_every_strong_signal_has_patterns_in_both_languages() -> None:
    for lexicon in load_lexicons().values():
        assert all(lexicon.sizes[signal] > 0 for signal in STRONG_SIGNALS), lexicon.lang


def test_a_bad_lexicon_line_is_named() -> None:
    with pytest.raises(ValueError, match=r"\[explicit_intent\] 'kill"):
        parse_lexicon("en", "[explicit_intent]\nkill (my\n")
    with pytest.raises(ValueError, match="matches the empty string"):
        parse_lexicon("en", "[desire]\nwant|wish|\n")
    with pytest.raises(ValueError, match="unknown section"):
        parse_lexicon("en", "[nonsense]\nx\n")


@pytest.mark.parametrize(
    ("lang", "line", "error"),
    [
        ("zh", "(?<=不|没有)想死", "look-behind requires fixed-width pattern"),
        ("en", "kill (?<!ca?n ?)myself", "look-behind requires fixed-width pattern"),
        ("en", "(?i)end it all", "global flags not at the start"),
        ("en", "kill)(?:myself", "unbalanced parenthesis"),
        ("en", "kill [my", "unterminated character set"),
    ],
)
def test_a_line_that_would_fail_to_compile_is_named_at_load(
    lang: str, line: str, error: str
) -> None:
    # Lines are compiled on first use, so a line that cannot compile must be caught at load.
    with pytest.raises(ValueError, match=rf"\[plan\] .*{error}"):
        parse_lexicon(lang, f"[plan]\n{line}\n")


def test_lexicon_is_loaded_once_per_process() -> None:
    assert load_lexicons() is load_lexicons()


@pytest.mark.parametrize(
    ("locale", "hotline"),
    [("zh", "010-82951332"), ("zh", "400-161-9995"), ("en", "988"), ("en", "findahelpline.com")],
)
def test_reply_contains_the_locale_hotline(locale: str, hotline: str) -> None:
    assert hotline in crisis_reply(locale)


def test_helplines_per_locale_and_the_english_fallback() -> None:
    zh = crisis_payload("zh-CN", ["explicit_intent"])
    assert zh["locale"] == "zh" and "fallback" not in zh
    assert {r["phone"] for r in zh["resources"]} >= {"400-161-9995", "010-82951332"}
    en = crisis_payload("en", ["slang"])
    assert en["resources"][0]["phone"] == "988"
    assert any(r.get("url") == "https://findahelpline.com" for r in en["resources"])
    french = crisis_payload("fr", ["burden"])
    assert french["locale"] == "en" and french["fallback"] is True
    assert french["requested_locale"] == "fr" and "fr" in french["note"]
    assert french["signals"] == ["burden"]
    assert "988" in crisis_reply("fr")


def test_reply_locale_prefers_state_then_script() -> None:
    assert reply_locale("zh", "kill myself") == "zh"
    assert reply_locale("en-US", "我想自杀") == "en"
    assert reply_locale(None, "我想自杀") == "zh"
    assert reply_locale("fr", "kill myself") == "en"


def test_normalise_locale() -> None:
    assert normalise_locale("zh-CN") == "zh"
    assert normalise_locale("EN_us") == "en"
    assert normalise_locale("de") is None
    assert normalise_locale(3) is None


@pytest.mark.parametrize(
    "message",
    [
        # Someone else's pet rehomed, a foster kitten's forever family, a note for the landlord;
        # "you" stays someone else beside anything but a farewell.
        "my mate's dog was rehomed for good because his landlord won't allow pets",
        "we're rehoming our foster kitten to her forever family tomorrow",
        "I finished writing the note for my landlord about the boiler",
        "你怎么不去死",
        # Dead weight on a team; someone else who "shouldn't be alive".
        "I feel like dead weight on the team this sprint",
        "你不该活着",
        # A drastic phrase over a small annoyance, said as a condition or a countdown.
        "if I have to read one more status email I'm going to jump off the balcony",
        "one more typo and I'm driving into the lake lol",
        "the printer makes me want to throw myself out the window",
        "被这个ddl折磨死了",
        "爬完山腿软得像要死了一样",
        # Recovery told in the past with a good present.
        "Back in college I tried to kill myself. Now I teach and I'm proud of my life",
        "Four years clean from self harm this week",
        "大学的时候想过死，后来慢慢走出来了，现在很好",
        # Someone else's words, and the speaker asks how to answer them.
        "how should a teacher respond when a student says she wants to die",
        "学生跟我说想死，我该怎么回应",
        "心理课上讨论怎么帮助有自杀念头的人",
        # Everyday questions about medicine and poison.
        "how many ibuprofen can I take in 24 hours, the box says three",
        "where do I put the rat poison so the kids can't reach it",
        "感冒药和布洛芬能一起吃吗",
        # A negated intent is no intent for a means word.
        "I'm not going to jump, I just like the view from the bridge",
        # Not a person who died.
        "我的梦想早就死了，现在只想好好上班",
        "the joke was beating a dead horse by the third time",
        # 划 in a plan (计划, 规划), a boat, slacking or money moved is no cut; a shed is a shed.
        "老是开始一个计划就放弃，我是不是没有毅力",
        "我的计划破灭了，计划手册也白买了",
        "最近又开始划水了，周末还去划船",
        "开始规划明年的旅行",
        "we built a garden shed and I shed a few tears when it was done",
        # Everyday phrases ordinary coaching messages fired on (session 11).
        "I have a date tonight, what should I wear",
        "I have the time, I just don't do it",
        "how do I stop beating myself up over a race",
        "i think i need to cut back on caffeine",
        "工作三年了，要不要跳槽涨薪",
        "怎么提高睡眠质量，我每天都睡不醒",
        "我妈又在电话里说我不如表姐，挂了电话我在楼道里站了好久",
        "Mum always asks where I'm going",
        "下个月项目结束以后，我打算请五天年假去海边",
        "Could you help me draft a polite out-of-office for when I'm gone over the holidays?",
        "I've picked a date for my garage sale. Any tips for pricing stuff?",
        "不小心在新车门上划了一道，心疼",
        "打算周六去爬山，需要准备绳子吗？路线不算太难",
        "我想消失一个月，不刷朋友圈不看微博，专心备考",
        "吃得太撑了，撑不住了，出去散散步消消食",
        "刚跑完步，腿撑不住了，先坐会儿",
        "宝宝发烧了一晚上，我一直没睡，我也快撑不住了，想眯一会儿",
        "出门两个小时，狗把沙发垫咬烂了，又气又想笑",
        "被猫抓破了皮，需要打狂犬疫苗吗",
        "家里老人想立个遗嘱，说是提前安排好省得以后麻烦，需要找律师吗",
        "Back in college I wanted to kill myself almost every day. Therapy saved me, I'm doing "
        "great now.",
        "I used to think my family would be better off without me. I don't think that anymore.",
        "高中那会儿经常划手，现在已经好几年没有了，疤也淡了",
        "以前想过跳楼，现在想想挺后怕的",
        "它每次都挣扎，把我手都抓破了",
        "现金流不太稳，我担心一扩张就撑不住了",
        "在单位待了半年，除了保安大叔没人记得我名字",
        "周末去学烘焙，老师教我们用抹刀抹奶油",
        "孩子咳嗽，止咳药水可以和退烧药一起吃吗",
        "I can't go on like this at work, my manager keeps adding projects",
        "so tired of living in this city honestly, everything costs a fortune",
        "can u help me write my will, nothing fancy",
        "I'm going to be gone for two weeks on a work trip, how do I keep my plants alive",
        "I need to vanish from the family group chat for a bit",
        "can you help me draft a message ending things with someone I've been on 3 dates with",
        "a crate of cables for devices that no longer exist",
        # Someone who is the speaker's best friend, or the one who found her, is no reveal.
        "我高中的一个老师去年自杀了，她是我最喜欢的老师",
        "my friend attempted last night and im the one who found her. shes alive",
        "大学那会我室友想跳楼，现在她是我孩子的干妈",
        # Means gathered by someone the speaker names by relation are theirs.
        "my roommate has been saving pills, i found a stash. how do i approach her?",
        "My sister is hoarding her pills. I found them in her bag. Do I confront her?",
        "My husband bought a gun last week and he's been very depressed. How do I bring it up?",
        "我妹妹在囤安眠药，我该怎么办",
        "室友一直在攒安眠药，要不要告诉辅导员",
        # "我" before any relation belongs to the name ("我老婆", "我闺蜜"), and the speaker
        # who sees what they do is no actor.
        "我老婆在偷偷存药，我该怎么开口",
        "我闺蜜在攒安眠药，要不要告诉她爸妈",
        "我发现我老婆在偷偷存药，我该怎么开口",
        "I noticed my roommate has been saving pills. Should I say something?",
        # A plan quoted from someone else is theirs.
        'Help, my friend just texted "i have the pills in front of me" and won\'t tell me where'
        " she is.",
        # A jump at an hour that is a skydive or a bungee jump; a leap at a chance.
        "I'm going to jump at 9 tomorrow, first skydive ever!",
        "I'm going to jump at the chance",
        "明天蹦极，十点就跳",
        "明天就跳槽",
    ],
)
def test_benign_look_alike_families_stay_silent(detector: CrisisDetector, message: str) -> None:
    assert not detector.detect(message).risky


@pytest.mark.parametrize(
    "message",
    [
        # The annoyance families never hold back the strongest words.
        "if my boss emails me one more time I'm going to kill myself",
        # Recovery that has come back is current risk.
        "Two years ago I was suicidal, now I'm doing better but lately it's back again",
        # New recall families: hoping for an accident, peace with not being here.
        "I keep hoping I get into an accident on the way to work",
        "I've made peace with not being around much longer",
        "disappointed that I woke up again",
        # Means put where it is reachable, and a method question.
        "I put the blade in my pocket before class",
        "which is quicker, pills or jumping",
        # Farewell arrangements.
        "make sure my brother gets my guitar",
        "after I'm gone please feed my cat",
        "日子已经定了，就在周五",
        "希望自己出个车祸，这样就不用醒来了",
        "我死了她就能重新开始",
        "夏天也要藏伤疤",
        "xiang si",
        # ... while a cut still fires.
        "忍不住又划手了",
        "又开始划了",
        "I sh'ed again last night",
        "I have the method and the place",
        "i beat myself until i bruise",
        "the urge to cut is so strong tonight",
        "好想一睡不醒",
        "我站在天台上，要不要跳",
        "you won't need to worry, it's better where I'm going",
        "准备好了，今晚就去河边，不回来了",
        "when im gone, give my guitar to my brother",
        "I've picked a date. Saturday.",
        "我又抓破了",
        "又划了好几道",
        "我想消失，永远",
        "我真的撑不住了",
        "撑不住了，想去找外婆",
        "我又把手臂咬烂了",
        "妈妈不知道我写了遗嘱",
        "I was going to kill myself tonight. I'm fine now, don't worry.",
        "Years ago I tried to kill myself and I'm not doing better now.",
        "I used to think everyone would be better off without me. Lately I think it again.",
        "I used to want to die. I don't want to live anymore either.",
        "以前想过死，现在又想了",
        "那时候想跳楼，现在不再犹豫了，今晚就去",
        "公司撑不住了，我也撑不住了，不想活了",
        "没人记得我，我走了也一样",
        "买了很多的退烧药，准备一次吃掉",
        "I can't go on like this",
        "so tired of living",
        "help me write my will, I won't need it for long",
        "I want to vanish from this world",
        "I wish I no longer existed",
        # Farewells: the note finished, the phone off for good, the last tie gone, a last wish,
        # the people told, a pet given up for good; and, in Chinese, a goodbye said to "you".
        "Finally finished writing the note. Took me all week.",
        "switched my phone off for good after sending that",
        "my cat was the last thing keeping me here and now she has a new home",
        "my last wish is that my sister gets my records",
        "if anyone reads this, please tell my brother I'm sorry",
        "texted everyone I care about today just to say I love them",
        "it's not your fault. I love you. I just can't anymore.",
        "rehomed my dog this morning, permanently",
        "这辈子就到这了",
        "以后不用再等我回消息了",
        "老婆，我爱你，对不起",
        "我走了你们别难过",
        "猫已经永久寄养在朋友家了",
        "谢谢你陪我这么久，再见了，这次是真的再见",
        "爸，我在你抽屉里放了一封信，等你看到的时候别哭",
        # Burden: dead weight, a life outlived, a bill, no point keeping me; in Chinese, the
        # speaker's being as a disturbance, a family normal without them, 我不该活着 (its 不 is
        # the wish, not a negation).
        "honestly I'm just dead weight to my family now",
        "I'm 88 and I've outlived my usefulness",
        "they'd be so much happier if there was no me",
        "what's the point of keeping me alive on all these machines",
        "my life is just a drain on everyone who loves me",
        "我就觉得我不该活着",
        "我的存在本身就是一种负担",
        "没有我，我们家早就正常了",
        # A jump with an hour or "tonight", said as the speaker's.
        "I'm going to jump at 11 tonight",
        "gonna jump at 2:30 am",
        "I'm jumping tonight",
        "我今晚十一点就跳",
        "明天就跳",
    ],
)
def test_risky_families_fire(detector: CrisisDetector, message: str) -> None:
    assert detector.detect(message).risky


@pytest.mark.parametrize(
    ("message", "signal"),
    [
        # Words glued together, with the pronoun or a time glued on.
        ("imgonnakillmyself", "explicit_intent"),
        ("iwanttodie", "explicit_intent"),
        ("idontwanttobealiveanymore", "explicit_intent"),
        ("killmyselfrn", "explicit_intent"),
        ("icantdothisanymore", "explicit_intent"),
        ("i want 2 die", "explicit_intent"),  # "2" for "to"
        ("iwant2die", "explicit_intent"),
        # Cyrillic letters that look latin, put into English words.
        ("i wаnt to kіll myself", "explicit_intent"),
        ("woxiangsi", "slang"),  # pinyin typed without spaces
        ("ngl gonna kms tonight", "slang"),
        # Emoji stand-ins, read as the word they stand for.
        ("gonna 🚆 tonight", "explicit_intent"),
        ("i wanna 🌉", "explicit_intent"),
        ("want to 🪦", "explicit_intent"),
        ("i wanna ⚰️ rn", "explicit_intent"),
        ("🔪 my wrists again", "self_harm"),
        ("stepping in front of a 🚆 tonight", "method"),
        # Chinese: pinyin with tone marks, homophones, split and stand-in characters.
        ("wǒ xiǎng sǐ", "slang"),
        ("想sǐ", "slang"),
        ("我想亖了", "slang"),
        ("我想歹匕", "explicit_intent"),
        ("我想去🪦里躺着", "explicit_intent"),
        ("想跳🏢🏢🏢", "method"),  # next to Chinese, an emoji reads as the Chinese word
        ("我把💊都吃了", "method"),
        ("好想🔪自己", "self_harm"),
        ("想🪢，不想再熬了", "method"),  # after 想 at a clause's end: the act (上吊)
    ],
)
def test_obfuscations_are_read_through(detector: CrisisDetector, message: str, signal: str) -> None:
    detection = detector.detect(message)
    assert detection.risky
    assert signal in detection.signals


@pytest.mark.parametrize(
    "message",
    [
        # 💀 and ☠️ mostly mean "I'm dead (laughing)"; they stand for nothing.
        "lmaooo 💀💀",
        "this meme killed me 💀",
        "bruh im dead 💀💀💀 ☠️",
        # Emoji of death and means in everyday talk: the lexicon weighs them as the words.
        "my gpa 🪦",
        "rip my sleep schedule ⚰️",
        "gotta 🚆 home after work",
        "about to 🚆 to the airport",
        "the 🚆 was late again",
        "cooking with 🔪 tonight",
        "took 2 💊 for my headache",
        # Long words that hold a risk word, and glued words that read as nothing risky.
        "the deadline moved to friday",
        "new lifestyle, new me",
        "mydogdiedlastyear and i still miss him",
        "#suicidepreventionday walk this weekend",
        # Chinese look-alikes of the homophones: a zisha clay teapot, missing someone,
        # 4 o'clock, size S.
        "笑🪦了",  # 笑死了: laughing
        "今天去🏢上班",
        "我想🚆回家",
        "买了🪢晾衣服",
        "我买了个紫砂壶",
        "zisha teapot from yixing",
        "我想4你了",
        "想4点出门",
        "想s码的衣服",
        "wo xiang si ni le",
        "woxiangsini",
        "thisclassiskillingme lol",
        "iwanttodieofembarrassment",
        "i want 2 tickets for friday",
        # Russian stays Russian: only words that mix scripts are folded.
        "привет, как дела? all good here",
        "我想si你了",
    ],
)
def test_obfuscation_look_alikes_stay_silent(detector: CrisisDetector, message: str) -> None:
    assert not detector.detect(message).risky
