"""Past forms of irregular English verbs, and the base form each belongs to.

The Porter stemmer strips suffixes, so "written" and "wrote" never meet "write": a reader
comparing "Who wrote Hamlet?" with "a tragedy written by William Shakespeare" sees no
shared verb, and takes the name nearest the title instead. Mapping these forms to the base
before stemming lets the question's verb anchor the answer.

Forms that are more often another word in encyclopaedic text are left out, so that they
keep their own meaning: "born" (bear), "left" (leave), "bound", "ground", "wound", "rose",
"thought", "felt", "fed", "bit", "lay", "bore"; and the auxiliaries (be, have, do), which
are stopwords.
"""

from __future__ import annotations

_TABLE = """
    arise arose arisen | awake awoke awoken | beat beaten | become became | begin began
    begun | bend bent | bite bitten | bleed bled | blow blew blown | break broke broken |
    breed bred | bring brought | build built | burn burnt | buy bought | catch caught |
    choose chose chosen | cling clung | come came | creep crept | deal dealt | dig dug |
    draw drew drawn | dream dreamt | drink drank drunk | drive drove driven | eat ate eaten
    | fall fell fallen | fight fought | find found | flee fled | fling flung | fly flew
    flown | forbid forbade forbidden | forget forgot forgotten | forgive forgave forgiven |
    freeze froze frozen | get got gotten | give gave given | go went gone | grow grew grown
    | hang hung | hear heard | hide hid hidden | hold held | keep kept | kneel knelt | know
    knew known | lay laid | lead led | lean leant | leap leapt | learn learnt | lend lent |
    lie lain | light lit | lose lost | make made | mean meant | meet met | mislead misled |
    overcome overcame | overtake overtook overtaken | overthrow overthrew overthrown | pay
    paid | prove proven | ride rode ridden | ring rang rung | rise risen | run ran | say
    said | see saw seen | seek sought | sell sold | send sent | sew sewn | shake shook
    shaken | shine shone | shoot shot | show shown | shrink shrank shrunk | sing sang sung |
    sink sank sunk | sit sat | slay slew slain | sleep slept | slide slid | speak spoke
    spoken | speed sped | spend spent | spin spun | spring sprang sprung | stand stood |
    steal stole stolen | stick stuck | sting stung | stride strode stridden | strike struck
    stricken | strive strove striven | swear swore sworn | sweep swept | swim swam swum |
    swing swung | take took taken | teach taught | tear tore torn | tell told | throw threw
    thrown | tread trod trodden | undergo underwent undergone | understand understood |
    undertake undertook undertaken | uphold upheld | wake woke woken | wear wore worn |
    weave wove woven | weep wept | win won | withdraw withdrew withdrawn | withstand
    withstood | write wrote written
"""

BASE_FORM: dict[str, str] = {
    form: row.split()[0] for row in _TABLE.split("|") for form in row.split()[1:]
}


def base_form(word: str) -> str:
    """The base of an irregular past form ("wrote" → "write"); other words unchanged."""
    return BASE_FORM.get(word, word)
