"""Search over both layers: the items' ranking and the messages' ranking, fused per session.

An item indexes what a summarizer kept of a session (title, summary, questions, atoms); the exact
words someone later types (an error code, a flag, a name said once) are often only in the
transcript. search() therefore ranks twice and fuses:

- the items lane is search as it always was (BM25 over the item fields, times recency);
- the messages lane ranks sessions by their transcripts. For each ranking term (not a stop word,
  terms.is_stop_word, nor under three characters, unless quoted), FTS5 scores every message
  holding it with bm25 for that term alone (its frequency in the message, the message's length),
  its IDF counted over sessions (SESSION_IDF); a session scores, per term, its best message's
  score, summed over the terms it holds, times the IDF-weighted share of the query's words it
  holds to COVERAGE_POWER. So a session holding more of the query's rarer words comes first, and
  a word said in one short message counts more than the same word lost in a long log. On a near
  tie (NEAR_TIE) the session whose best message is newer goes first. The session is shown by its best
  message (the highest sum over its terms). A word also matches its other English forms
  (terms.word_forms); when only those forms make it common (below), it is also read as written
  (WRITTEN_FORM). A term in more than LANE_MAX_ROWS messages is read at its newest
  LANE_MAX_ROWS (what passes the filters), each scored alike: older sessions holding only that
  word are not seen by this lane (`explain` says so; the items lane still reads it). Its IDF
  counts it as held by its share of the sessions within those rows' time, over every session
  within the filters (WINDOW_DENSITY), not by the few sessions its newest rows reached. A term the index reads as a
  phrase (`scripts/order_event.py`: four words) is looked up only when its words are in
  PHRASE_MAX_ROWS messages at most, together: FTS5 reads every word's list to check positions,
  which for four common words cost 10-40 ms at 2,000 sessions. Such identifiers are what the
  items' trigram index finds well.

Fusion is weighted reciprocal rank fusion over sessions (fuse(), a list of lanes, so a third
lane is one more Ranked): score = sum over lanes of weight * gate / (RRF_K + rank), rank counted
from 1 within each lane. The messages lane weighs MESSAGES_WEIGHT times its separation (below;
its terms weighed by the sessions that hold them, SESSION_IDF); a place of it held by common
words alone (read at their newest rows, scoring alike) counts only for a session the items lane
found too (CAPPED_ALONE), and then only as far as that session's items gate (CAPPED_ALONE_GATED).
The items lane weighs its
separation (how far its first score stands above its SEPARATION_DEPTH-th: a lane whose hits all
score alike says little), and each of its sessions is gated by the messages lane's evidence for
it, (that session's messages score / the best of the sessions whose transcripts hold as many of
the query's words, COVERAGE_GATE) ** GATE_POWER. In small talk every item's
summary matches a question through everyday words, and the items' order is noise: a session the
items put first whose transcript holds few of the query's words gives way to the one whose
transcript holds the fact. In coding sessions the item that leads (an error in its atoms) is
also the session whose transcript holds the words, so it keeps its say. A session the lane never
read because a common word was read at its newest messages only is not taken as lacking it: for
names (a path, a flag), and plain words held by under half the sessions within the filters
(READ_WORDS), its own messages are searched (READ_UNREAD), and what that finds is held by
its transcript for the fused current-first too (READ_HELD); `explain` gives each item's gate and
where its evidence came from (gate_why()). Each session is shown by
one item: the best item of the items lane when that lane found it (its title and atoms lead),
else the item whose transcript holds the best message. On equal scores the items lane's order
decides.

After fusion the current-first rule runs again over the fused order (current_first()), guarded by
the transcripts' evidence. A revision the items lane's current-first placed before an older hit
whose transcript holds query words and only common ones (read at their newest rows, scoring
alike: the lane could not weigh it) keeps that place (CAPPED_REVISION): its evidence is unknown,
not lacking. For the same reason a session the lane never read whose read found common words
alone is gated against the sessions whose evidence is common words alone too, not against one
holding an uncapped word at full bm25 (READ_ALIKE): like is compared with like. Before that, a
hit whose transcript holds every query word of the hit above it and more, at a higher evidence,
goes before it (MORE_WORDS_HELD): the items' gated share alone does not pass such a session.
Where the lane cannot tell two transcripts apart (as many words, different ones, a near tie) and
the lower one's item holds more of the query's words, among them a common word its transcript
was never read for, the items' order decides (ITEMS_ON_NEAR_TIE). Where the lane read common words
at their newest rows only, the fused hits' transcripts are read for them, and the hits holding a
query word that fewer than half of the hits hold go before the hits holding none (PAGE_WORDS). A
name of the query the lane left out (a phrase of common words) is read in the fused hits'
transcripts, and the hits holding it go first (NAMES_READ).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter

import apsw

from jezero.query import bm25, current, stats
from jezero.query import messages as mq
from jezero.query.common import Hits, budget, fetch_hits, time_conditions
from jezero.query.errors import QueryError
from jezero.query.terms import Term, is_stop_word, parse_terms, word_forms

LANES = ("items", "messages")
# The semantic lane (query/vectors.py), chosen only when `[semantic]` turns it on. It joins the
# reciprocal rank fusion below with its own weight ([semantic] weight), unscaled: cosine
# similarities of a query against a library all lie close together, so their separation would
# say nothing.
VECTORS = "vectors"
# The usual constant of reciprocal rank fusion (Cormack et al. 2009): large enough that the first
# few places of one lane do not drown the other lane, small enough that place 1 still counts.
RRF_K = 60
# The lanes' say. Chosen on half A of benchmarks/retrieval's queries (its README: the halves, the
# candidates tried, the figures on half B): the messages lane at 1.0, the items at their
# separation (depth 20, power 2) with the gate's power 4 scored best on A (coding MRR@10 +
# conversational R@10 + long-chat R@10); without the gate any items weight from 0.25 to 1 took
# long-chat R@1 from 0.58 (the messages alone) to 0.29-0.41.
MESSAGES_WEIGHT = 1.0
SEPARATION_DEPTH = 20
SEPARATION_POWER = 2
GATE_POWER = 4
# After fusion the current-first rule (current.py) runs again; a newer hit may move up only when
# its transcript holds at least this share of the messages lane's best score for the query.
# Chosen again on half A after the offline summarizer learnt to keep stated facts (the revisions'
# items now lead on their subject more often): 0.25 scores 0.897 + 0.481 + 1.000 on A (coding
# MRR@10 + chats R@10 + long-chat R@10) against 0.894 + 0.481 + 1.000 at 0.5; on half B coding
# MRR@10 0.876 -> 0.892, the chats unchanged (benchmarks/retrieval/README.md).
CURRENT_EVIDENCE = 0.25
UNHELD_GATE = 0
# A common word (in more than LANE_MAX_ROWS messages) is read by the lane at its newest
# LANE_MAX_ROWS only, so in a large library the lane never looks at an older session holding it:
# that session's evidence read 0 and its item was gated to nothing, though its transcript holds
# the words (`checkout/webhooks.py` with 2,000 newer sessions stored after it: items 1st, fused
# 4th). With READ_UNREAD, each of the items lane's first READ_SESSIONS sessions that the lane did
# not read at all has its own messages searched for the common terms that are names or parts of
# one (READ_NAMES: `checkout/webhooks.py`, `webhooks`), a bounded read of that session
# (unread_evidence()); the gate then reads what it finds as the lane would have scored it. "Not
# read" no longer counts as "not held"; a session whose transcript lacks the name still has no
# say. Half A (benchmarks/retrieval/README.md, branch padded), criterion coding MRR@10 + chats
# R@10 + long-chat R@10: unpadded 2.400 -> 2.400 (no query moved in any set), padded 1.673 ->
# 1.710 (three file queries: 4th -> 1st, out -> 2nd, 4th -> 1st; nothing else moved). Refused on
# A: every common word, not names only, and sessions the lane read in part too (READ_SEEN):
# unpadded 2.400 -> 2.369 (chats A R@10 0.469 -> 0.438, the items' noise back; B 0.531 ->
# 0.438); sessions the lane never read, every word: unpadded A 2.400 (tie), but chats B 0.531 ->
# 0.500 (two questions whose only lane word is a speaker's name). READ_SESSIONS 5, 10, 30 tie on
# A (padded); 10, the default page, kept: the read costs ~0.1 ms per session read.
READ_UNREAD = True
READ_SEEN = False
READ_SESSIONS = 10
READ_NAMES = True
# The read takes the plain common words too (READ_WORDS) when they tell sessions apart: held by
# under WORDS_SPREAD of the sessions within the filters, by the lane's own estimate (WINDOW_DENSITY:
# the sessions its newest rows reached over the items within those rows' time; a word whose rows
# span WINDOW_MAX_ITEMS items or more reached few and is read). One half is bm25's own line (a word
# in half the rows or more has IDF_FLOOR), not a tuned constant. With 2,000 distractor sessions
# stored after the judged ones, everyday words of a coding session (`generamos`, `facturas`) are
# read at rows that never reach it, and its item, 1st or 2nd in the items lane, was gated to 0
# (padded coding B, `con qué generamos las facturas en PDF`: out of 10 -> 4th; raw BM25 out of 10).
# The names-only rule was kept (branch padded) because every word, read in the sessions the lane
# never read, lost chats B `which neighbourhood is Priya living in now` 1st -> 2nd and `what
# vehicle does Jonas drive now` 10th -> out: the word read there was the speaker's name, in every
# session of the conversation (share 1.0), which the half leaves out. Half A (benchmarks/retrieval
# README, branch padded3): no query moved, padded or not, on either engine; half B padded FTS5
# coding R@5 0.927 -> 0.945, R@10 0.945 -> 0.964; `what kind of car do I have` (omar-31) 4th -> 5th
# (an older distractor holding `car`, 5th in the items, now has its say). Read in the sessions
# the lane read in part too (READ_SEEN), padded B lost `which book did the book club pick` 7th ->
# out: refused.
READ_WORDS = True
WORDS_SPREAD = 0.5
# The words the read finds are held by that session's transcript for the fused current-first too
# (lane.held): its names rule (NAMES_RULE) and CURRENT_COVERAGE read an unread anchor as holding
# nothing, so any newer hit could move before it, though its transcript holds the query's name.
READ_HELD = True
# The items' gate compares a session's evidence with the best of the sessions whose transcripts
# hold at least as many of the query's words (COVERAGE_GATE, coverage_bars()), as seed 004 orders
# messages by coverage first and bm25 second. A word counts only when the lane weighs it above
# bm25's floor (bm25.IDF_FLOOR: a word held by half the sessions or more says nothing). In a library
# of thousands of sessions everyday dev words (`push`, `notifications`) are in half of them, and
# the lane's best was a session holding one rarer generic word (`provider`) that the session the
# query is about never says: its item, 1st in the items lane, was gated to 0 (padded coding, `push
# notifications provider`: items 1st, fused 6th). No constant; half A (criterion coding MRR@10 +
# chats R@10 + long-chat R@10, benchmarks/retrieval/README.md, branch padded): unpadded 2.399 and
# padded 1.710 unchanged (no query of A moved); half B: unpadded 2.469 -> 2.478 (`k3s cluster
# upgrade` 2nd -> 1st), padded 1.842 -> 1.857 (`push notifications provider` 6th -> 1st), nothing
# moved down in any set. Every word counted (the floor's words too): padded A 1.710 -> 1.707.
COVERAGE_GATE = True
# A revision the items lane's current-first placed before an older hit of its subject (current.py)
# takes that hit's gate when it is higher: its own transcript is short and says the new choice in
# other words, and the gate would drop it out of the fused list before the fused current-first
# could see it. Half A: 2.445 without, 2.465 with (chats R@10 0.519 -> 0.538).
INHERIT_GATE = True
# The fused current-first moves a newer hit before an anchor only when its transcript holds every
# name of the query the anchor's transcript holds (NAMES_RULE: a term with digits or punctuation,
# or quoted: `--clean`, `tripdata_nightly`, `app/services/pdf.py`), and at least CURRENT_COVERAGE
# of the anchor's query terms. A query naming a command, a file or a flag asks where it was, not
# what is current; and a newer session holding one of the anchor's three words is not on its
# subject for this query. Measured on the benchmark: every wrong move (Expo prebuild, `airflow dags
# test`, `app/services/pdf.py`, two paraphrases) lacked a name or held at most a third of the
# anchor's terms; the right ones held half or more. Half A: without the names rule 2.447, without
# coverage 2.456, both 2.465; coverage 0.34, 0.5 and 0.67 tie on A (0.5 kept, the middle).
NAMES_RULE = True
CURRENT_COVERAGE = 0.5
# With that transcript test as a second guard, the fused current-first needs only later()'s
# subject share (current.SELF_SHARE), not search's stricter MOVE_SHARE: the TLS revision (0.19 of
# the certbot session's subject) now moves. Half A: 2.474 at MOVE_SHARE, 2.483 at SELF_SHARE and
# at 0.1 (coding A MRR@10 0.936 -> 0.945); half B unchanged.
FUSED_MOVE_SHARE = current.SELF_SHARE
# The fused current-first's lead test (current.MAX_LEAD: the anchor at most twice the newer hit)
# compares each hit's standing in the lane that ranks it best: its items relevance or its
# transcript's evidence, each as a share of that lane's best. The items' relevance alone held back
# a revision whose short summary says the new choice in other words while its transcript leads the
# messages lane (`límite de peticiones por minuto por clave de API`: the first rate-limit session
# led the items 5.8x, while the third's transcript scored 0.90 of the first's). Half A (branch
# quality3): 2.422 -> 2.431 (coding A MRR@10 0.906 -> 0.915: that query 2nd -> 1st, no other query
# of any set moved, none of error, command or file); half B unchanged; with the tantivy engine no
# query moved; `later` unchanged.
LEAD_BY_EITHER_LANE = True
# The messages lane weighs each term by the sessions that hold it (SESSION_IDF), not by the
# messages: a session repeats its own subject through many messages (`backfill` in 105 messages of
# 2 sessions read as more common than `total`, said once in each of 22). Each term's bm25 is
# rescaled by idf(sessions holding it) / idf(messages holding it); a common term (read at its
# newest LANE_MAX_ROWS) counts as held by at least LANE_MAX_ROWS x sessions / messages sessions,
# as its message IDF already assumes. Half A: 2.454 without, 2.465 with (coding R@5 0.954 -> 0.972
# over both halves).
SESSION_IDF = True
# A session's score is multiplied by the share of the query's words it holds, each word weighed by
# its IDF over sessions, to this power: a session holding all three of `k3s cluster upgrade` in a
# long transcript came below one holding `cluster` and `upgrade` in short messages. Half A: none
# 2.465; IDF-weighted share, power 0.5: 2.474, power 1: 2.455, power 2: 2.453; the plain count
# of words, power 1: 2.474 (a tie with 0.5 IDF-weighted, which was kept: a missing rare word
# should cost more than a missing common one; the plain count took `weather join returns nulls
# ...` from 3rd to 9th, the session holding only `weather`).
COVERAGE_POWER = 0.5
# The messages lane weighs its separation (as the items do, power MESSAGES_SEPARATION): a lane
# whose first sessions all score alike (every chat session holds `dog` and `trip`) says little
# about which comes first. Half A: 2.426 without, 2.465 with power 1 (power 2: 2.456); chats R@10
# 0.492 -> 0.539, long chats R@5 0.886 -> 0.867.
MESSAGES_SEPARATION = 1
# The messages lane, on a near tie, puts the newer session first: one pass down its order, a
# session within NEAR_TIE of the score above it whose best message is newer swaps with it (each
# session moves at most one place). An old and a new session stating one fact ("my daughter goes
# to ...", later "we moved my daughter to ...") hold the same query word, and the older often in a
# shorter message. Half A (stratified halves, branch quality2): 0.05, 0.1, 0.2 and 0.3 score alike
# (criterion 2.422, as without; long chats R@1 0.726 -> 0.745, MRR@10 0.815 -> 0.825: three
# questions up, none down), exact ties only: no change, 0.5: coding MRR@10 0.906 -> 0.897. 0.1
# kept (half B: coding MRR@10 0.935 -> 0.939, chats R@5 0.281 -> 0.312, long chats unchanged at R@1
# 0.615). The items' recency factor on the lane's scores instead scored 2.437 (README).
NEAR_TIE = 0.1
# _scores: of a session's messages scoring alike for a term, the newest (the highest id) is its
# best, whatever order the engine gave them in (FTS5 gives them newest first; tantivy's BM25 in
# the order it stored them).
TIE_BY_ID = True
# The messages lane's places held by common words alone (read at their newest LANE_MAX_ROWS rows,
# each scoring alike: the order among them is their messages' time) count in the fusion only for
# sessions the items lane found too (messages_ranked(); the items' gate still reads their
# evidence). In a library of thousands of sessions everyday words (`TLS`, `certificates`) are in
# half of them: the newest sessions that merely say them took places 2-40 of the lane, each with
# a whole place's say, and buried the item the items lane put first (padded coding, `how are TLS
# certificates issued and renewed`: items 1st, fused out of 10). No constant. Half A
# (benchmarks/retrieval/README.md, branch padded2; criterion coding MRR@10 + chats R@10 + long-chat
# R@10): padded 1.710 -> 1.750 (TLS out -> 3rd, invoice PDFs out -> 10th), unpadded 2.399
# unchanged (no relevant session of any set moved); half B padded 1.857 -> 1.924, nothing moved down in any
# set on either engine. Every such place given no say (the items' agreement not asked): padded A
# 1.753, B 1.910, but `push notifications provider` 1st -> 5th (its revision, 1st in the items,
# is read by the lane through its common words alone), a long-chat question 5th -> 6th. Those
# places removed from the lane's order (the places below moving up): the same figures.
CAPPED_ALONE = True
# Such a place of a session the items lane found counts as far as that session's items gate
# (CAPPED_ALONE_GATED): the items lane's agreement is its gated share, and a session whose
# transcript the gate finds lacking the query's words is no better placed by a tie ordered by
# time. With 2,000 distractors, the ones whose items the items lane ranked 10th-30th (gate 0.002)
# kept a whole place of the lane and stood before the revision the items put 1st (padded coding A,
# `how are TLS certificates issued and renewed`: 3rd -> 2nd, as raw BM25). No constant. Half A
# padded FTS5 coding MRR@10 0.806 -> 0.809; unpadded A unchanged; unpadded B `what can't Kofi eat
# anymore` 8th -> 9th (every session after the first scoring ~0: the order among them is the
# items' now, no longer the lane's time).
CAPPED_ALONE_GATED = True
# The fused current-first does not move a newer hit before an anchor the items lane did not find:
# its subject test reads the items' titles and atoms, and an anchor found by its transcript alone
# is a session whose item says none of the query's words (a fact said in passing in a chat about
# something else): a newer chat of the same title is no newer answer (padded long chats, `which
# language am I learning on the app`: the session saying it, 1st in the lane, gave way to a newer
# chat titled as it, about debts, holding `app` alone). The newer session whose transcript holds
# every word the anchor's does still moves (current.newer_on_the_query). Half A padded 1.710 ->
# 1.710 (long chats A R@1 0.575 -> 0.594: that question 2nd -> 1st), unpadded unchanged; half B
# unchanged; tantivy the same move and no other.
UNFOUND_ANCHOR = True
# The names rule (NAMES_RULE) for a name of the query the messages lane left out (a phrase whose
# words are in more than PHRASE_MAX_ROWS messages together: no transcript was seen to hold it, so
# the rule let any newer hit of the anchor's subject move): the newer hit must be one the items
# lane found, whose trigram index looked the name up (padded coding, `tripdata/clean.py`: the
# orchestrator revisions, holding `tripdata` alone, went before the sessions that edited the
# file). Half A padded: that query 5th -> 4th (coding A MRR@10 +0.001), nothing else moved in
# any set, padded or not, on either engine.
NAMES_LEFT_OUT = True
# A revision the items lane's current-first placed before an older hit of its subject keeps that
# place in the fused order when the messages lane could not weigh its transcript (CAPPED_REVISION):
# every query word its transcript is known to hold (the lane's and READ_UNREAD's) is a common word,
# read at its newest LANE_MAX_ROWS rows and scored alike, so CURRENT_EVIDENCE read it as holding
# nothing and the fused current-first never moved it. Its transcript's evidence is unknown, not
# lacking; the items' judgement of the pair (their titles and atoms) stands, under the names rule
# (holds_names). With 2,000 distractor sessions stored after the judged ones, `how are TLS
# certificates issued and renewed` (infra-tls-2: items 1st, placed before infra-tls-1, whose
# transcript holds `renewed`, the one uncapped word, at full bm25): fused 2nd -> 1st on both
# engines. No constant; figures in benchmarks/retrieval/README.md (branch decision3).
CAPPED_REVISION = True
# A session the lane never read whose read (READ_UNREAD) found common words alone is compared, in
# the items' gate, with the best of the sessions whose evidence is common words alone too
# (READ_ALIKE): the read scores each such word as the lane scores it, alike (~0.008 for `PDFs`
# with 2,000 distractor sessions), and COVERAGE_GATE's bar was a session holding one uncapped word
# at full bm25 (17.5, `generated`), so the gate read ~5e-14 for the session the items put first.
# Among sessions the lane can weigh only alike, its evidence says nothing against the items'
# order: compare like with like. Only the read's sessions (the lane never read them, so they hold
# no place of its own: CAPPED_ALONE_GATED is unchanged). Padded (benchmarks/retrieval/README.md,
# branch decision3): `how are invoice PDFs generated` A 10th -> 8th (FTS5), out -> 8th (tantivy);
# FTS5 B `con qué generamos las facturas en PDF` 4th -> 2nd, `which search engine does the shop
# use for product search` 4th -> 2nd; unpadded no query moved. Refused: every session whose
# evidence is common words alone, the lane's too (unpadded long chats R@10 1.000 -> 0.981:
# `how long is my commute` grace-18 2nd -> out, omar-28 6th -> out; chats B two questions down).
READ_ALIKE = True
# After fusion, a hit whose transcript holds every query word the hit just above it holds, and
# more, at a higher evidence, goes before it (MORE_WORDS_HELD, more_words_held_first()): the
# transcripts rank it first on both counts (seed 004's coverage first, bm25 second), so what put
# the other above it is the items lane's share alone, and a gated share (the items' gate reads
# that transcript as lacking the query's words) is no reason to pass a session holding them all.
# Each session moves at most one place. Seen padded (long chats, `which language am I learning on
# the app`): the session saying it holds `learning` and `app`, the lane's 1st; a distractor whose
# item is about language apps holds `app` alone (lane 2nd, items 1st, gate 0.04), and its items
# share (0.0003) outweighed the lane's 1/61 - 1/62 between the two places. No constant. Padded
# long_fact R@1 0.571 -> 0.614 (FTS5; raw 0.600), tantivy 0.600 -> 0.629; unpadded long chats up
# on both halves; nothing moved down in any set (benchmarks/retrieval/README.md, branch padded4).
MORE_WORDS_HELD = True
# After that pass, the items' order decides between two adjacent hits whose transcripts the lane
# cannot tell apart (ITEMS_ON_NEAR_TIE, items_on_near_ties()): both hold as many of the query's
# words, but different ones, and the lower one's evidence is within NEAR_TIE of the upper one's
# (the lane's own near tie), while the lower one's item, which the items lane ranks first, holds
# more of the query's words, among them a common word (read at its newest rows only) that its
# transcript was never read for. The lane's tie then compares the weights of two different words,
# not which session the query means, and its coverage count is incomplete (unknown, not lacking,
# as for CAPPED_REVISION); the gate's power had turned the tie into a cut of the items share.
# Seen padded (benchmarks/retrieval, coding B, `state management library in the tidepool app`):
# mobile-state-2 (items 1st; its transcript holds `management`, 5.53; `state` and `app` common and
# never read there) came after mobile-lstar (a build failure, `library` alone, 5.88; items 2nd):
# fused 2nd -> 1st, no other query moved in any set (FTS5; tantivy's items put lstar first:
# no move). No constant. Refused on the unpadded chats, where the items' order is noise: the
# items' order on an equal count and a near tie alone took six queries down (`when did Kofi start
# the new position` 1st -> 2nd: both transcripts hold `Kofi` and `start`); with the item test but
# not its unread common word, four; with different words too, one (`which company gave me the
# job`, A, 8th -> 9th: a small-talk item holding `company`). Figures in
# benchmarks/retrieval/README.md (branch decision5).
ITEMS_ON_NEAR_TIE = True
# MORE_WORDS_HELD also swaps the pair when the lower hit's evidence is within the lane's near tie
# (NEAR_TIE) of the upper one's, not above it, and the items lane ranks the lower hit higher
# (MORE_WORDS_NEAR_TIE): on a near tie the lane's bm25 cannot tell the two transcripts apart, and
# both counts that can (the words held, the items' order) agree on the lower one. Seen padded
# (benchmarks/retrieval, coding A, `dbt build --select staging`): data-dbt-unique holds `dbt`,
# `--select` and `staging` (evidence 18.6; items 1st), data-orch-3 `dbt` and `--select` in shorter
# messages (19.5; the lane's 1st): fused 2nd -> 1st on both engines, nothing else moved in any
# set, padded or not. Without the items' agreement, padded chats B `how long is the cousin from
# Ireland staying` (priya-jonas) went 1st -> 2nd: priya-jonas-29 holds the update's words and
# `long` (common) at 0.998 of its evidence, the items 3rd against the update's 1st.
MORE_WORDS_NEAR_TIE = True
# A name of the query that the lane left out (a phrase whose words are in more than
# PHRASE_MAX_ROWS messages together: no transcript was seen to hold it) is looked up in the
# transcripts of the fused hits (NAMES_READ, names_read_first(): one bounded read per session, as
# READ_UNREAD reads), and the hits holding more of those names go first, each group in the fused
# order. The name is what a query naming a file or a command asks for; a session saying its parts
# apart in short messages (`tripdata` and `clean`) had outranked the one that edited the file,
# whose item the items lane put first. Raw BM25, whose trigram index reads the name whole, finds
# it. Seen padded (benchmarks/retrieval, coding A): `tripdata/clean.py` 4th -> 1st, `app/services/
# pdf.py` 2nd -> 1st (billing-pdf-2, its revision placed first by the items' current-first, does
# not say the file), both engines; unpadded every name was looked up by the lane and nothing
# moved. No constant. Cost: ~1 ms a search whose name was left out (2,075 sessions), none else.
NAMES_READ = True
# When the lane read some of the query's words at their newest rows only (common words: it never
# looked at older sessions holding them, and scored those it saw alike), the fused hits'
# transcripts are read for those words (PAGE_WORDS, page_words_first(): one bounded read per
# session and word, as READ_UNREAD reads). Among the hits, a query word held by fewer than half of
# them tells them apart (bm25's own line, IDF_FLOOR, drawn within the page); the hits holding such
# a word go before the hits holding none, each group in the fused order. A word in half the library
# (`parser`, the distractors' file names) weighs nothing there, but among a project's sessions it is
# the one word that names the subject. Seen padded (benchmarks/retrieval/README.md, branch fused7):
# `plume parser implementation` (coding A) 6th -> 1st on both engines: every plume session holds
# `plume`, two hold `parser`. Nothing else moved, up or down, on either engine, padded or not
# (unpadded no word is read at its newest rows only: the rule is not asked). A word as written
# (WRITTEN_FORM, `"pdfs"`) is a term of its own here, as in the lane: read as its word, it lost
# tests/test_fused_written_form.py's `how are pdfs generated` (the session saying `generated`, the
# only hit holding it, passed the one saying `pdfs`, whose forms most hits hold), though it took
# the three padded cousin questions 2nd -> 1st. Refused on the way: reading the page when no word was
# common (the lane read every message: unpadded coding B `order emails show the wrong hour for
# customers in Spain` 1st -> 6th, three long-chat trips questions down); any hit holding more of
# the page's telling words passing one holding fewer, or holding them all and more (padded coding
# B `payment reminders sent for invoices that were already paid` 3rd -> 4th: a Spanish session
# whose transcript lacks `payment`); the count of every query word held, the page's common words
# too (padded `how long is my commute` 1st -> 8th-9th for two people, `how are TLS certificates
# issued and renewed` 1st -> 9th). No constant. Cost: ~1-2 ms a search that reads (coding, 2,075
# sessions), none else; at 10,000 sessions (benchmarks/messages, 2026-12-03) it reads on 133 of the
# 200 queries and the fused search's p50 / p99 over the items' stayed 1.77-1.79x / 1.29-1.31x
# (1.70-1.81x / 1.37x with it off, the runs interleaved): within issue 12's 2x budget.
PAGE_WORDS = True
# The rules after fusion (MORE_WORDS_HELD to the fused current-first) read at least this many of
# the fused order's first hits, and the answer is then cut to the limit: PAGE_WORDS's page is the
# same for every limit, so a search for 3 hits gives the first 3 of a search for 10 (with the page
# cut to 3, `plume parser implementation` read three plume sessions holding `plume` alone). The
# default page (search's limit).
PAGE_HITS = 10

# A plain word of the query that is common only through its other forms (terms.word_forms: the
# lane reads `PDFs` as `pdfs OR pdf OR ...`) is also read as written (WRITTEN_FORM), as one more
# term of the lane (labelled `"PDFs"`), when at most LANE_MAX_ROWS messages hold it as written:
# those are ranked by bm25 at the written word's own IDF. The other forms widen what a word
# finds (people ask "sign up" of "signed up"); they should not make the word the person typed
# say nothing. With 2,000 distractor sessions stored after the judged ones, `pdf` is in half the
# sessions (bm25's floor) and `PDFs` in two, so `how are invoice PDFs generated` was ranked by
# `generated` alone: the sessions saying it held the lane's places 1-7, and the session the items
# put 1st (billing-pdf-2, whose transcript says `PDFs`) was 8th. Raw BM25, whose trigram index
# reads `pdfs` as written, puts it 1st. No constant; figures in benchmarks/retrieval/README.md
# (branch decision4).
WRITTEN_FORM = True
# A session saying the word as written holds the word's forms too (WRITTEN_HOLDS_FORMS): the word
# as written is one of them (`pdfs` in `pdfs OR pdf OR ...`), and only the cap kept the lane from
# reading it there, so it scores what each of the forms' rows scored (alike), as the lane would
# have. The two are two clauses of one word, as the tantivy items' exact field and stem are
# (branch parity2): a session saying the word as the person typed it matches both. The items'
# gate then compares it with the sessions holding as many of the query's terms (billing-pdf-2:
# 0.14 -> 1, fused 2nd -> 1st, padded).
# So one query word said as typed is two of the lane's terms (`"PDFs"` and `PDFs`), and it counts
# twice wherever the lane's terms are counted: its score sums both, the share of the query's
# weights holds both (COVERAGE_POWER), the items' gate's tiers count both (coverage_bars()), and
# so do MORE_WORDS_HELD's held sets, CURRENT_COVERAGE and the lane's `coverage` in `explain`. That
# is what puts billing-pdf-2 in a tier of its own above the sessions holding `generated`. The word
# counted once (its better weight) was measured and refused (benchmarks/retrieval/README.md,
# branch coverage5): padded, 7 queries down on FTS5 and 6 on tantivy, none up (`how are invoice
# PDFs generated` 1st -> 2nd; `how long is my commute` 1st -> 3rd-9th for four people: the session
# saying `commute` holds one word, the ones saying `commutes` beside `long` two, a tier above it);
# unpadded, none moved. Counted once everywhere but the gate's tiers, one moved (a cousin
# question, 1st -> 2nd): the tiers make the rest.
WRITTEN_HOLDS_FORMS = True
# For CAPPED_REVISION the written form of a common word stays that common word
# (WRITTEN_STAYS_CAPPED): a revision whose transcript holds the query's common words alone is
# weighed by the lane on those words only, against an anchor holding an uncapped word at full
# bm25, whether or not one of them was also read as written. Without it, reading `certificates`
# as written took `how are TLS certificates issued and renewed` (infra-tls-2, the revision the
# items placed first) 1st -> 2nd: its evidence, 0.22 of infra-tls-1's, is under CURRENT_EVIDENCE.
WRITTEN_STAYS_CAPPED = True
# A term in more messages than this is common: it is read at its newest this many (that pass the
# filters), each scored with the IDF of a word in this many messages, without bm25, whose IDF
# reads the term's whole list. At 10,000 sessions (benchmarks/messages/README.md) the fused
# search cost 2.48x the items alone at 1,000, 2.11x at 500, 2.02x at 300 (p50, a loaded machine).
LANE_MAX_ROWS = 300
# A common word weighs as held by its share of the sessions within its newest rows' time, times
# the sessions within the search's filters (_common_floors), no longer by the sessions those rows
# reached alone. A speaker's name in every message of a chat reached the newest 12 of its
# conversation's 30 sessions and weighed as a word 12 sessions hold (IDF 2.2, where `dog`, which
# 26 of the 30 hold, weighs 1.3), so the newest small talk outranked older sessions holding the
# question's other words; a library of thousands of sessions reads most words so. No quality
# constant (WINDOW_MAX_ITEMS bounds the work: a word whose newest rows span more items is left as
# before). Half A (benchmarks/retrieval/README.md, branch chats): chats MRR@10 0.383 -> 0.399,
# coding and long chats unchanged; with 2,000 distractor sessions coding MRR@10 0.708 -> 0.745,
# chats 0.255 -> 0.344, long chats unchanged.
WINDOW_DENSITY = True
WINDOW_MAX_ITEMS = 1000
# A phrase (a term the index reads as several words) is looked up only when its words' lists hold
# this many rows at most, together.
PHRASE_MAX_ROWS = 10_000
# Words shorter than this say nothing about a session ("de", "on", "a") and, in a word-level
# index, match whole transcripts in one language: the lane leaves them out, as the items'
# trigram index (three characters at least) does.
LANE_MIN_CHARS = 3
# Sessions taken from each lane.
LANE_SESSIONS = 50
# Items taken from the items lane (its limit; more cost an items search: its rare-term rows and
# its current-first over every hit). Half A: 50 and 30 score alike (2.483; half B too), 20 2.445,
# 10 2.311; 30 cut the fused search's mean CPU at 10,000 sessions from 12.6 to 11.6 ms.
ITEMS_SESSIONS = 30


def check_lanes(lanes, *, vectors: bool = False) -> tuple[str, ...]:
    """The chosen lanes in their fixed order; None: every lane that is on. `vectors`: whether
    the semantic lane is on (then "vectors" may be chosen)."""
    known = LANES + ((VECTORS,) if vectors else ())
    if lanes is None:
        return known
    if isinstance(lanes, str):
        lanes = (lanes,)
    try:
        chosen = tuple(dict.fromkeys(lanes))
    except TypeError:
        raise QueryError(f"lanes must be a list of {', '.join(known)}") from None
    if not chosen or any(lane not in known for lane in chosen):
        off = " (vectors needs the semantic lane on: [semantic] enabled = true)" if VECTORS in chosen else ""
        raise QueryError(f"lanes must be one or more of {', '.join(known)}; got {list(chosen)!r}{off}")
    return tuple(lane for lane in known if lane in chosen)


@dataclass
class LaneHit:
    """A session as the messages lane found it: the item holding its best message."""

    item_id: int
    source: str
    session_id: str
    rank: int  # from 1
    match: mq.Match
    left_out: list[str]  # query phrases too costly for this lane
    capped: list[str] = ()  # query words ranked among their newest LANE_MAX_ROWS messages only
    near_tie: bool = False  # moved above a near-tie older session (NEAR_TIE)


def message_lane(conn: apsw.Connection, query: str, *, sources, source, project, since, time_budget_ms: int,
                 sessions: int = LANE_SESSIONS, engine: str | None = None) -> Hits:
    """Sessions ranked by their messages (see the module docstring): for each ranking term, FTS5's
    bm25 of every message holding it (its newest LANE_MAX_ROWS); a session scores its best
    message's per term, summed over the terms it holds. Shown by its best message. With a derived
    index `engine` (tantivy), its messages index reads the terms by the same rules
    (messages.engine_term_matches; its BM25 for the words below LANE_MAX_ROWS)."""
    if not mq.has_messages(conn):
        return Hits()
    terms = mq.terms_for(conn, query)
    if not terms:
        return Hits()
    filters = mq.MessageFilters(sources=sources, source=source, projects=[project] if project else None,
                                include_tools=True, include_subagents=True, since=since)
    with budget(conn, time_budget_ms):
        try:
            ranker = mq.backend(conn)  # a backend ranking the messages itself counts its own rows
            total, sessions_n = ranker.message_rows() if ranker is not None else \
                (mq.message_count(conn), stats.index_stats(conn).rows)
            answered = mq.engine_term_matches(conn, engine, [t for t in terms if _ranking(t)], filters, LANE_MAX_ROWS,
                                              PHRASE_MAX_ROWS,
                                              bm25.idf(total, LANE_MAX_ROWS) if total > LANE_MAX_ROWS else None)
            per_term: list[tuple[str, list[tuple]]]
            per_term, left_out, capped = answered if answered is not None else ([], [], [])
            # how many messages hold each term, up to LANE_MAX_ROWS (for its IDF over sessions):
            # before the filters, as the FTS5 path below counts it (the n of the IDF its bm25 used,
            # which _by_sessions replaces), where the engine counted it; else its filtered matches
            counted = getattr(per_term, "held", None) or {}
            held_by = {text: LANE_MAX_ROWS if text in capped else min(counted.get(text, len(found)), LANE_MAX_ROWS)
                       for text, found in per_term}
            for t in terms if answered is None else ():
                if not _ranking(t):
                    continue  # "did", "where", "de", "on": they say nothing about which session is meant
                if len(t.key) > 1 and not _cheap_phrase(conn, t.key):
                    left_out.append(t.text)  # a phrase of common words: see the module docstring
                    continue
                held = mq.count_up_to(conn, mq.lane_expression(t), LANE_MAX_ROWS + 1)
                common = held > LANE_MAX_ROWS
                if common:
                    capped.append(t.text)  # read at its newest messages, each scored as if in LANE_MAX_ROWS
                found = mq.term_matches(conn, t, filters, LANE_MAX_ROWS,
                                        bm25.idf(total, LANE_MAX_ROWS) if common else None)
                if found:
                    held_by[t.text] = min(held, LANE_MAX_ROWS)
                    per_term.append((t.text, found))
            if WRITTEN_FORM:  # a word common only through its other forms is also read as written
                for label, found, held in written_forms(conn, engine, terms, capped, filters):
                    per_term.append((label, found))
                    held_by[label] = held
            # how many messages were read per term (an engine gives a common word's first message
            # per session alone, with that count: messages.Newest)
            read = {text: getattr(found, "read", len(found)) for text, found in per_term}
            floors = _common_floors(conn, per_term, capped, filters, sessions_n, read,
                                    getattr(per_term, "items_within", None)) if WINDOW_DENSITY else {}
            weights: dict[str, float] = {}  # each term's IDF over sessions, for coverage
            factors: dict[str, float] = {}  # each term's relevance scaled to its IDF over sessions
            for text, found in per_term:
                factors[text], weights[text] = _by_sessions(found, held_by[text], total, sessions_n,
                                                            floors.get(text, 0.0))
            # a session missing the query's rarer words gives way (COVERAGE_POWER)
            if WRITTEN_HOLDS_FORMS:  # a session saying the word as written says the word
                per_term = _written_holds_forms(per_term)
            scored = _scores(per_term, factors, weights if COVERAGE_POWER else None)
            ranked = _rank_sessions(scored, sessions)
            shown = mq.rows(conn, [best for best, _, _ in ranked], mq.MessageFilters(include_tools=True,
                                                                                      include_subagents=True))
            moved: set[int] = set()
            if NEAR_TIE:
                ranked, moved = _newer_on_near_ties(ranked, shown)
            out = Hits()
            out.evidence = {key: score for key, score, _ in scored}  # for the items' gate
            out.held = {key: by_term.keys() for key, _, by_term in scored}  # the terms each transcript holds
            out.names = frozenset(t.text for t in terms if t.part_of is None and _is_name(t))
            # for the items' gate (unread_evidence): each term's weight, and what each message of a
            # common word read at its newest only scored (alike, by the rule above)
            out.weights, out.filters, by_text = weights, filters, {t.text: t for t in terms}
            out.common = {text: mq.common_word(conn, t, found[0][3] * factors[text],
                                               _is_name(t) or t.part_of is not None, t.part_of)
                          for text, found in per_term if text in capped and read[text] >= LANE_MAX_ROWS
                          for t in (by_text.get(text),) if t is not None}
            # each common word's estimated share of the sessions within the filters (READ_WORDS)
            out.spread = getattr(floors, "share", None) or {}
            for best, score, matched in ranked:
                m = shown.get(best)
                if m is None:
                    continue  # deleted by a writer since the lane read it
                m.coverage, m.bm25, m.matched = len(matched), -score, matched
                out.append(LaneHit(m.item_id, m.source, m.session_id, len(out) + 1, m, left_out, capped,
                                   best in moved))
            return out
        except apsw.InterruptError:
            out = Hits()  # out of work: the items lane answers alone
            out.cut = True
            return out


def written_forms(conn: apsw.Connection, engine: str | None, terms, capped, filters: mq.MessageFilters
                  ) -> list[tuple[str, list[tuple], int]]:
    """WRITTEN_FORM: for each plain word of the query that is common (`capped`: read at its newest
    LANE_MAX_ROWS messages, each scoring alike) only through its other forms (terms.word_forms),
    the word as written, when at most LANE_MAX_ROWS messages hold it: (its label, `"word"`; its
    messages with their bm25 for the word alone, as term_matches() gives them; how many messages
    hold it). On the configured index engine when it answers (messages.engine_term_matches)."""
    capped = set(capped)
    written = [Term(t.text, t.key, exact=True) for t in terms
               if t.text in capped and t.part_of is None and not t.exact and len(t.key) == 1
               and word_forms(t.key[0]) and _ranking(t)]
    if not written:
        return []
    out = []
    # (a relevance given for common words, so the engine says which are: those are left as they were,
    # and their messages are not read: read_common)
    answered = mq.engine_term_matches(conn, engine, written, filters, LANE_MAX_ROWS, None, 0.0, read_common=False)
    if answered is not None:
        per_term, _, common = answered
        counted = getattr(per_term, "held", None) or {}
        for text, found in per_term:
            if text not in common and found:
                out.append((written_label(text), found, min(counted.get(text, len(found)), LANE_MAX_ROWS)))
        return out
    for w in written:
        held = mq.count_up_to(conn, w.quoted, LANE_MAX_ROWS + 1)
        if not held or held > LANE_MAX_ROWS:
            continue  # common as written too: the lane's reading of it stands
        found = mq.term_matches(conn, w, filters, LANE_MAX_ROWS)
        if found:
            out.append((written_label(w.text), found, held))
    return out


def written_label(word: str) -> str:
    """The lane's label of a word read as written (WRITTEN_FORM): the word in double quotes."""
    return f'"{word}"'


def is_written_label(text: str) -> bool:
    return text.startswith('"') and text.endswith('"')


def _written_holds_forms(per_term: list) -> list:
    """WRITTEN_HOLDS_FORMS: `per_term` with each session holding a word as written (written_forms(),
    labelled `"word"`) holding the word's forms too (the term `word`, read at its newest messages
    only, each scoring alike), at that alike score, as the lane would have read it there."""
    written = {text[1:-1]: found for text, found in per_term if is_written_label(text)}
    if not written:
        return per_term
    out = []
    for text, found in per_term:
        extra = written.get(text)
        if extra and found:
            have = {(r[1], r[2]) for r in found}
            added = [(mid, src, sid, found[0][3]) for mid, src, sid, _ in extra if (src, sid) not in have]
            if added:
                more = type(found)([*found, *added])
                if hasattr(found, "__dict__"):  # (a messages.Newest: how many were read, the oldest)
                    more.__dict__.update(found.__dict__)
                found = more
        out.append((text, found))
    return out


def _common_floors(conn: apsw.Connection, per_term, capped, filters: mq.MessageFilters,
                   sessions_n: int, read: dict[str, int] | None = None,
                   items_within: int | None = None) -> dict[str, float]:
    """WINDOW_DENSITY: for each common word read at its newest LANE_MAX_ROWS messages, the
    sessions estimated to hold it: those its rows reached, times the items within the filters over
    the items within the rows' time (those that end after the oldest row read). Items stand in for
    sessions (most sessions are one item): both counts are index searches of the items' times, per
    source, the window's counted up to WINDOW_MAX_ITEMS (a word whose newest rows span more is left
    as before: its rows reached many sessions; the sources are counted until the sum reaches it).
    `read`: the messages read per term, when `per_term` gives fewer (messages.Newest);
    `items_within`: the items within the filters, when the engine counted them for this state
    (messages.TermMatches; the table's count is an index walk of every one of them)."""
    out = _Floors()
    read = read or {}
    todo = [(text, found) for text, found in per_term
            if text in capped and read.get(text, len(found)) >= LANE_MAX_ROWS]
    if not todo:
        return out  # under the cap once filtered: every message holding it was read
    if filters.source is not None:
        sources = [filters.source] if filters.sources is None or filters.source in filters.sources else []
    elif filters.sources is not None:
        sources = list(filters.sources)
    else:  # the library's sources, one index seek each
        sources = [r[0] for r in conn.execute(
            "WITH RECURSIVE s(x) AS (SELECT min(source) FROM items UNION ALL "
            "SELECT (SELECT min(source) FROM items WHERE source > s.x) FROM s WHERE s.x IS NOT NULL) "
            "SELECT x FROM s WHERE x IS NOT NULL")]
    where, args = ["i.source = ?"], []
    if filters.projects is not None:
        where.append(f"i.project IN ({','.join('?' * len(filters.projects))})")
        args += filters.projects

    def count(since: str | None, cap: int | None) -> int:
        """The items within the filters that end at `since` or after, counted up to `cap` over
        every source. (One lower bound: with two, the index search took the first, the
        filters' since, and walked every item from there to find the window's few.)"""
        when, when_args = time_conditions("i.occurred_at", since, filters.before)
        sql = f"SELECT 1 FROM items AS i WHERE {' AND '.join(where + when)}"
        # (The cap written in the SQL, not bound: SQLite prepares a statement whose LIMIT is a bound
        # value again at every execution, ~8 us each. Each source counted up to the whole cap: the
        # sum reaches it exactly when the sum of the exact counts does.)
        sql = f"SELECT count(*) FROM ({sql}{f' LIMIT {int(cap)}' if cap else ''}) AS w"
        counted = 0
        for src in sources:  # each source up to the cap: past it the sum says no more
            counted += conn.execute(sql, [src, *args, *when_args]).fetchone()[0]
            if cap and counted >= cap:
                return cap
        return counted

    scope = None
    for text, found in todo:
        lowest = getattr(found, "oldest", None)
        oldest = conn.execute("SELECT at FROM messages WHERE id = ?",
                              (min(r[0] for r in found) if lowest is None else lowest,)).fetchone()
        if oldest is None:
            continue  # deleted by a writer since the lane read it
        # at or after both the oldest row and the filters' since: the later of the two (stored text)
        window = count(oldest[0] if filters.since is None else max(oldest[0], filters.since), WINDOW_MAX_ITEMS)
        if window >= WINDOW_MAX_ITEMS:
            continue
        if scope is None:
            plain = filters.projects is None and filters.since is None and filters.before is None \
                and filters.source is None and filters.sources is None
            if plain:
                scope = sessions_n
            elif items_within is not None and len(set(sources)) == len(sources):  # (a source named twice counts twice)
                scope = items_within
            else:
                scope = count(filters.since, None)
        seen = len(found) if isinstance(found, mq.Newest) else len({(r[1], r[2]) for r in found})
        out[text] = seen * scope / max(window, seen, 1)
        out.share[text] = seen / max(window, seen, 1)
    return out


class _Floors(dict):
    """_common_floors()'s answer: per common word, the sessions estimated to hold it within the
    filters; `share`: that estimate as a share of the sessions within the filters."""

    def __init__(self):
        super().__init__()
        self.share: dict[str, float] = {}


def _newer_on_near_ties(ranked, shown):
    """The lane's order with recency on near ties (NEAR_TIE): one pass down `ranked` ((best message
    id, score, terms), best first); a session scoring at least (1 - NEAR_TIE) of the one above
    it, whose best message (in `shown`) is newer, swaps with it, and the pair is passed. Also the
    best message ids of the sessions that moved up."""
    ranked, moved = list(ranked), set()
    i = 1
    while i < len(ranked):
        (b0, s0, _), (b1, s1, _) = ranked[i - 1], ranked[i]
        m0, m1 = shown.get(b0), shown.get(b1)
        if m0 and m1 and s1 >= (1 - NEAR_TIE) * s0 and m1.at > m0.at:
            ranked[i - 1], ranked[i] = ranked[i], ranked[i - 1]
            moved.add(b1)
            i += 2
        else:
            i += 1
    return ranked, moved


def _by_sessions(found: list[tuple], held: int, total: int, sessions_n: int,
                 floor: float = 0.0) -> tuple[float, float]:
    """What replaces bm25's IDF over messages in the term's matches by its IDF over sessions
    (SESSION_IDF): the factor each match's relevance is multiplied by (1.0: none), and that IDF:
    `held` messages of `total` hold it, the sessions are those of `found`, `sessions_n` the
    library's items. A common word (`held` at LANE_MAX_ROWS) counts as held by at least `floor`
    sessions too (WINDOW_DENSITY)."""
    if not sessions_n or not total:
        return 1.0, 1.0
    seen = len(found) if isinstance(found, mq.Newest) else len({(r[1], r[2]) for r in found})
    if held >= LANE_MAX_ROWS:
        seen = max(seen, LANE_MAX_ROWS * sessions_n / total, floor)
    by_sessions = bm25.idf(sessions_n, min(seen, sessions_n))
    if not SESSION_IDF:
        return 1.0, by_sessions
    return by_sessions / bm25.idf(total, held), by_sessions


_NONE = frozenset()
_PLAIN_WORD = re.compile(r"[^\W\d_]+")


def _is_name(term) -> bool:
    """A term written as a name, not as a plain word: quoted, or holding digits or punctuation
    (`--clean`, `tripdata_nightly`, `app/services/pdf.py`, `2019-2024`)."""
    return term.exact or not _PLAIN_WORD.fullmatch(term.text)


def _ranking(t) -> bool:
    """Whether the lane ranks by this term (not a stop word, nor a short unquoted word)."""
    return not (is_stop_word(t) or (len(t.text) < LANE_MIN_CHARS and not t.exact))


def _scores(per_term: list[tuple[str, list[tuple]]], factors: dict[str, float] | None = None,
            weights: dict[str, float] | None = None) -> list[tuple[tuple[str, str], float, dict]]:
    """Each session the terms' messages belong to: its score (per term, its best message's
    relevance, summed over the terms), and per term that best (relevance, message id). `factors`:
    each term's relevance is multiplied by its factor first (_by_sessions); `weights`: each
    session's score is multiplied by the share of the terms' weights it holds (of all the terms'
    weights) to COVERAGE_POWER."""
    # Of a session's messages scoring alike for a term, the newest (the highest id) is its best,
    # as FTS5's term_matches gives them (newest first, the first kept): an engine's BM25 gives
    # equal scores in the order it stored them (tantivy), which moved the session's best message,
    # and with it its place among sessions scoring alike (by their best message's id) and its time
    # for NEAR_TIE, with the index's build (TIE_BY_ID).
    # A session scores, per term, its best message's bm25 for it. Adding later messages too (0.05,
    # 0.1 or 0.3 of their own) lowered coding R@1 on half A (0.827 -> 0.792, 0.720, ~0.5): a word
    # repeated through a test log outweighed the message about it.
    # (One dict lookup a row where setdefault made a dict each time; a relevance above -1.0 is
    # kept, as against the default (-1.0, 0) before.)
    best: dict[tuple[str, str], dict[str, tuple[float, int]]] = {}
    get, by_id = best.get, TIE_BY_ID
    for text, found in per_term:
        factor = factors[text] if factors is not None else 1.0
        if isinstance(found, mq.Newest) and found:  # one row per session, each scoring alike
            relevance = found[0][3] * factor
            if not relevance > -1.0:
                for _, source, session_id, _ in found:
                    best.setdefault((source, session_id), {})
                continue
            for mid, source, session_id, _ in found:
                key = (source, session_id)
                by_term = get(key)
                if by_term is None:
                    best[key] = {text: (relevance, mid)}
                    continue
                was = by_term.get(text)
                if was is None or relevance > was[0]:
                    by_term[text] = (relevance, mid)
            continue
        for mid, source, session_id, relevance in found:
            relevance *= factor
            key = (source, session_id)
            by_term = get(key)
            if by_term is None:
                best[key] = {text: (relevance, mid)} if relevance > -1.0 else {}
                continue
            was = by_term.get(text)
            if was is None:
                if relevance > -1.0:
                    by_term[text] = (relevance, mid)
            elif relevance > was[0] or (by_id and relevance == was[0] and mid > was[1]):
                by_term[text] = (relevance, mid)
    whole = sum(weights.values()) if weights else 0
    if not whole > 0:
        return [(key, sum([r for r, _ in by_term.values()]), by_term) for key, by_term in best.items()]
    # (A one-term session's share is its term's, computed once: (0 + w) / whole is w / whole.)
    alone = {t: (w / whole) ** COVERAGE_POWER for t, w in weights.items()}
    out = []
    for key, by_term in best.items():
        if len(by_term) == 1:
            for t, (r, _) in by_term.items():
                out.append((key, (0 + r) * alone[t], by_term))
        else:
            out.append((key, sum([r for r, _ in by_term.values()]) *
                        (sum([weights[t] for t in by_term]) / whole) ** COVERAGE_POWER, by_term))
    return out


def _rank_sessions(scored: list[tuple], sessions: int) -> list[tuple[int, float, list[str]]]:
    """The lane's first `sessions` sessions, best first, as (its best message, its score, the terms
    it holds). A session's best message is the one with the highest sum over the terms it is best
    for; on equal scores, the session whose best message scores more, then the newer. Only the
    sessions that can place are looked at message by message."""
    # (The bar from the scores alone, sorted as floats: the order below is total, message ids
    # being unique, so the sessions need no sort of their own first.)
    if len(scored) > sessions:
        bar = sorted([s[1] for s in scored], reverse=True)[sessions - 1]
        scored = [s for s in scored if s[1] >= bar]
    ranked = []
    for _key, score, by_term in scored:
        if len(by_term) == 1:  # one term: its best message is the session's
            (relevance, top), = by_term.values()
            ranked.append((score, 0.0 + relevance, top, list(by_term)))
            continue
        per_message: dict[int, float] = {}
        for relevance, mid in by_term.values():
            per_message[mid] = per_message.get(mid, 0.0) + relevance
        top, summed = max(per_message.items(), key=_SUM_THEN_ID)
        ranked.append((score, summed, top, sorted(by_term)))
    # (Descending on (score, sum, id) is ascending on their negations: the ids make every key distinct.)
    ranked.sort(key=_SCORE_SUM_ID, reverse=True)
    return [(top, score, matched) for score, _, top, matched in ranked[:sessions]]


_SUM_THEN_ID = itemgetter(1, 0)
_SCORE_SUM_ID = itemgetter(0, 1, 2)


def _cheap_phrase(conn: apsw.Connection, tokens: tuple) -> bool:
    """Whether FTS5 can find this phrase within PHRASE_MAX_ROWS rows of its words' lists: it reads
    the list of every word of a phrase to check their positions."""
    budget_rows = PHRASE_MAX_ROWS
    for tok in tokens:
        if mq.token_over(conn, tok, budget_rows):  # (a skip to the row past the budget: a quarter cheaper
            return False                         # than counting up to it, and the usual answer at scale)
        budget_rows -= mq.token_rows(conn, tok, budget_rows + 1)
        if budget_rows < 0:
            return False
    return True


@dataclass
class Ranked:
    """One lane's session order, as fuse() reads it: best first, one entry per session. `weight` is
    the lane's say; `gate`, when given, scales each session's share (see items_lane())."""

    name: str
    weight: float
    sessions: list[tuple[str, str]]  # (source, session_id)
    shown: list  # what shows each session: an item hit (dict) or a LaneHit (its item is fetched)
    gate: dict[tuple[str, str], float] | None = None


def items_ranked(item_hits: list[dict], lane: list[LaneHit], read: dict | None = None) -> Ranked:
    """The items' session order for fusion. Its weight is its separation; each session's share is
    gated by the messages lane's evidence for it, (its messages score / the lane's best) **
    GATE_POWER: an item that leads on words its transcript barely holds (a chat summary matched
    through everyday words) gives way, one whose transcript agrees keeps its say. Without messages
    (an old library, a query of short words, a lane out of work) the items rank alone. `read`:
    the evidence of sessions whose transcripts were read for the lane's common words
    (unread_evidence(), READ_UNREAD), in place of the lane's own, never above the lane's best.
    With COVERAGE_GATE the best a session is compared with is that of the sessions holding at
    least as many of the query's words (coverage_bars()). With `explain`, each shown item's
    explain gets a "gate" entry (gate_why())."""
    keys, shown = [], []
    for h in item_hits:
        key = (h["source"], h["session_id"])
        if key not in keys:
            keys.append(key)
            shown.append(h)
    gate = None
    evidence = getattr(lane, "evidence", None)
    if lane and evidence:
        best = max(evidence.values())  # the lane's first may be a near tie moved up (NEAR_TIE)
        if read:
            evidence = {**evidence, **read}
        held = {**(getattr(lane, "held", None) or {}), **(getattr(read, "held", None) or {})}
        bar = coverage_bars(evidence, held, getattr(lane, "weights", None) or {}) if COVERAGE_GATE else None
        bars = {key: bar(key) if bar else best for key in keys}
        gate = {key: (min(1.0, evidence[key] / bars[key]) if bars[key] > 0 else 1.0) ** GATE_POWER
                if key in evidence else UNHELD_GATE for key in keys}
        inherited: dict[tuple[str, str], tuple[str, str]] = {}
        if INHERIT_GATE:
            by_id = {h["id"]: (h["source"], h["session_id"]) for h in item_hits}
            for moved, anchor in getattr(item_hits, "placed", {}).items():
                m, a = by_id.get(moved), by_id.get(anchor)
                if m in gate and a in gate and gate[a] > gate[m]:
                    gate[m] = gate[a]
                    inherited[m] = a
        capped = set(lane[0].capped) if READ_ALIKE and read else set()
        if capped:  # a read session holding common words alone: compared with its like (READ_ALIKE)
            alike = max((ev for k, ev in evidence.items() if held.get(k) and set(held[k]) <= capped), default=0.0)
            for key in keys:
                if key in read and held.get(key) and set(held[key]) <= capped and alike > 0:
                    bars[key] = alike
                    gate[key] = max(gate[key], min(1.0, evidence[key] / alike) ** GATE_POWER)
        for key, h in zip(keys, shown):
            if isinstance(h.get("explain"), dict):
                h["explain"]["gate"] = gate_why(key, gate, evidence, bars, best, held, read, inherited)
    return Ranked("items", separation([h.get("score") or 0.0 for h in item_hits]), keys, shown, gate)


def gate_why(key, gate, evidence, bars, best, held, read, inherited) -> dict:
    """What `explain` says of an item's gate: its value, the evidence it was read from and what
    that was compared with, the terms its transcript holds, and whether the evidence came from the
    lane or from reading the session's own messages (READ_UNREAD: `read_terms`, the words that
    read found), or was taken from the hit it was placed before (INHERIT_GATE)."""
    came = "read_unread" if read and key in read else "messages_lane" if key in evidence else "none"
    out = {"gate": gate[key], "power": GATE_POWER, "evidence": evidence.get(key, 0.0), "compared_with": bars[key],
           "lane_best": best, "coverage_gate": COVERAGE_GATE, "held_terms": sorted(held.get(key, ())),
           "evidence_from": came}
    if came == "read_unread":
        out["read_terms"] = sorted(getattr(read, "found", {}).get(key, ()))
    if key in inherited:
        out["inherited_from"] = inherited[key][1]
    return out


def coverage_bars(evidence: dict, held: dict, weights: dict) -> Callable[[tuple[str, str]], float]:
    """COVERAGE_GATE: what the items' gate compares a session's evidence with: the best evidence
    of the sessions whose transcripts hold at least as many of the query's words (`held`: the
    lane's and what unread_evidence() read), each word counted when the lane weighs it above
    bm25's floor (`weights`). A session holding none of those is compared with the lane's best."""
    counted = {t for t, w in weights.items() if w > bm25.IDF_FLOOR}
    inter, held_by = counted.intersection, held.get

    def count(key) -> int:
        return len(inter(held_by(key, ())))

    # (every session the lane scored, hundreds a search: the count inlined, max() as a test)
    best_of: dict[int, float] = {}
    for key, ev in evidence.items():
        n = len(inter(held_by(key, ())))
        was = best_of.get(n, 0.0)
        best_of[n] = ev if ev > was else was
    at_least, running = {}, 0.0
    for n in sorted(best_of, reverse=True):
        running = max(running, best_of[n])
        at_least[n] = running
    tiers = sorted(at_least)
    top = at_least[tiers[0]] if tiers else 0.0

    def bar(key) -> float:
        n = count(key)
        return next((at_least[t] for t in tiers if t >= n), top) or top
    return bar


def lane_separation(lane) -> float:
    """separation() of the messages lane's session scores."""
    scores = sorted((-x.match.bm25 for x in lane), reverse=True)
    if not scores or scores[0] <= 0:
        return 0.0
    below = scores[min(SEPARATION_DEPTH, len(scores)) - 1] if len(scores) > 1 else 0.0
    return (scores[0] - below) / scores[0]


def messages_ranked(lane: list[LaneHit], items_found: set | None = None, items_gate: dict | None = None) -> Ranked:
    """The messages lane's session order for fusion, weighed by its separation. With
    CAPPED_ALONE and `items_found` (the sessions of the items lane), a session whose lane
    evidence is words read at their newest rows only (each scoring alike: its place is its
    messages' time) has no say unless the items lane found it too, and then (CAPPED_ALONE_GATED,
    `items_gate`: the items lane's gate per session) as much as its items gate."""
    weight = MESSAGES_WEIGHT
    if MESSAGES_SEPARATION and lane:
        weight *= lane_separation(lane) ** MESSAGES_SEPARATION
    keys = [(x.source, x.session_id) for x in lane]
    gate = None
    if CAPPED_ALONE and items_found is not None and lane and lane[0].capped:
        capped = set(lane[0].capped)
        alone = {key for key, x in zip(keys, lane)
                 if key not in items_found and capped.issuperset(x.match.matched or ())}
        if CAPPED_ALONE_GATED and items_gate is not None:
            gate = {key: 0.0 if key in alone else 1.0 for key in keys}
            for key, x in zip(keys, lane):
                if key in items_found and capped.issuperset(x.match.matched or ()):
                    gate[key] = items_gate.get(key, 0.0)
        elif alone:
            gate = {key: 0.0 if key in alone else 1.0 for key in keys}
    return Ranked("messages", weight, keys, list(lane), gate)


def vectors_ranked(near, messages=None) -> Ranked:
    """The semantic lane's session order (query/vectors.py VectorHits), at its configured weight.
    Its shares follow the curve the lane chooses for the query from the messages lane's answer
    (`messages`, None when it did not run; query/vectors.py flat_curve(): weight / (K + rank)), through
    the per-session gate."""
    keys = [(x.source, x.session_id) for x in near]
    k = near.curve(messages) if hasattr(near, "curve") else RRF_K
    gate = None if k == RRF_K else {key: (RRF_K + r) / (k + r) for r, key in enumerate(keys, start=1)}
    ranked = Ranked(VECTORS, getattr(near, "weight", 0.0), keys, list(near), gate)
    ranked.rrf_k = k
    return ranked


def fuse(conn: apsw.Connection, lanes: Sequence[Ranked], limit: int, *, explain: bool = False,
         arrange: Callable[[list[dict], list[str], int], list[dict]] | None = None) -> list[dict]:
    """One hit per session, by weighted reciprocal rank fusion of the lanes' session orders:
    sum over lanes of weight * gate / (RRF_K + rank). Ties go to the first lane's order, then the
    next. Each session is shown by the first lane (in `lanes` order) that gives it an item.
    `arrange(order, lane names, limit)`, when given, rearranges the whole fused order before the
    cut to `limit` (the vector lane's literal guard, query/vectors.py)."""
    sessions: dict[tuple[str, str], dict] = {}
    for lane in lanes:
        for rank, (key, shown) in enumerate(zip(lane.sessions, lane.shown), start=1):
            entry = sessions.setdefault(key, {"key": key, "ranks": {}, "shares": {}, "shown": None, "score": 0.0})
            gate = 1.0 if lane.gate is None else lane.gate.get(key, 0.0)
            share = lane.weight * gate / (RRF_K + rank)
            entry["ranks"][lane.name], entry["shares"][lane.name] = rank, share
            entry["score"] += share
            if entry["shown"] is None or (not isinstance(entry["shown"], dict) and isinstance(shown, dict)):
                entry["shown"] = shown
    unranked = max((len(lane.sessions) for lane in lanes), default=0) + 1
    order = sorted(sessions.values(),
                   key=lambda e: (-e["score"], *(e["ranks"].get(lane.name, unranked) for lane in lanes)))
    order = (arrange(order, [lane.name for lane in lanes], limit) if arrange else order)[:limit]
    rows = fetch_hits(conn, [e["shown"].item_id for e in order if not isinstance(e["shown"], dict)])
    hits = []
    for e in order:
        shown = e["shown"]
        base = shown if isinstance(shown, dict) else rows.get(shown.item_id)
        if base is None:
            continue  # deleted by a writer since the lane read it
        hit = {k: v for k, v in base.items() if k != "explain"}
        hit["score"] = e["score"]
        if explain:
            hit["explain"] = {**(base.get("explain") or {}), "fusion": _why(e, lanes)}
        hits.append(hit)
    return hits


def separation(scores: list[float]) -> float:
    """How clearly a lane's first score stands above its SEPARATION_DEPTH-th (module constants):
    1 when the rest score nothing, 0 when they all score as the first. A lane with a single hit
    separates it fully."""
    ranked = sorted((s for s in scores if s > 0), reverse=True)
    if not ranked:
        return 0.0
    if len(ranked) == 1:
        return 1.0
    below = ranked[min(SEPARATION_DEPTH, len(ranked)) - 1]
    return ((ranked[0] - below) / ranked[0]) ** SEPARATION_POWER


def _why(entry: dict, lanes: Sequence[Ranked]) -> dict:
    out = {"rule": "reciprocal rank fusion of the lanes' session orders, each lane weighted (the items by how "
                   "clearly they separate their best sessions, each item gated by its transcript's evidence)",
           "score": entry["score"], "lanes": {lane.name: lane.weight for lane in lanes},
           "ranks": dict(entry["ranks"]), "shares": dict(entry["shares"]),
           "items_rank": entry["ranks"].get("items"), "messages_rank": entry["ranks"].get("messages")}
    messages = next((lane for lane in lanes if lane.name == "messages"), None)
    hit = messages.shown[entry["ranks"]["messages"] - 1] if messages and "messages" in entry["ranks"] else None
    if hit is not None:
        out.update(message_id=hit.match.id, message_role=hit.match.role, matched_terms=hit.match.matched,
                   coverage=hit.match.coverage, left_out_of_messages=hit.left_out, capped_in_messages=list(hit.capped),
                   newer_on_near_tie=hit.near_tie)
        say = messages.gate.get(entry["key"], 1.0) if messages.gate is not None else 1.0
        if not say:
            out["messages_no_say"] = "capped_alone"  # its words read at their newest rows only (CAPPED_ALONE)
        elif say < 1.0:
            out["messages_say_by_items_gate"] = say  # the same, the items lane found it (CAPPED_ALONE_GATED)
    vectors = next((lane for lane in lanes if lane.name == VECTORS), None)
    if vectors is not None:
        near = vectors.shown[entry["ranks"][VECTORS] - 1] if VECTORS in entry["ranks"] else None
        out.update(vectors_weight=vectors.weight, vectors_rank=entry["ranks"].get(VECTORS),
                   vectors_rrf_k=getattr(vectors, "rrf_k", RRF_K))
        if "kept_below" in entry:  # held below a literal match of the query (query/vectors.py)
            out.update(kept_below_literal_match=entry["kept_below"])
        if near is not None and hasattr(near, "similarity"):
            out.update(vectors_similarity=round(near.similarity, 4),
                       vectors_nearest="item" if near.window_id is None else f"message window {near.window_id}")
    return out


def search(conn: apsw.Connection, query: str, lanes: Sequence[str], items_lane: Callable[[int], list[dict]], *,
           sources, source, project, since, limit: int, time_budget_ms: int, explain: bool,
           reorder: Callable[[list[dict]], list[dict]] | None = None,
           vectors_lane: Callable[[], list] | None = None, engine: str | None = None) -> list[dict]:
    """The fused search; `items_lane(n)` runs the items search for its best n hits, `reorder` is
    the items' current-first rule (current.py), applied again to the fused order (below);
    `vectors_lane()` the semantic lane (query/vectors.py), when "vectors" is chosen."""
    lane = message_lane(conn, query, sources=sources, source=source, project=project, since=since,
                        time_budget_ms=time_budget_ms, engine=engine) if "messages" in lanes else Hits()
    near = vectors_lane() if vectors_lane is not None and VECTORS in lanes else ()
    notes = (near.off,) if getattr(near, "off", None) else ()
    ranked = [messages_ranked(lane)] + ([vectors_ranked(near, lane if "messages" in lanes else None)] if near else [])
    arrange = near.literal_guard(lane) if near else None  # literal matches keep their place (query/vectors.py)
    if "items" not in lanes:
        hits = Hits(fuse(conn, ranked, limit, explain=explain, arrange=arrange))
        hits.cut, hits.notes = lane.cut, notes
        return hits
    item_hits = items_lane(max(limit, ITEMS_SESSIONS))
    read = unread_evidence(conn, lane, item_hits, time_budget_ms) if READ_UNREAD else None
    if READ_HELD and getattr(read, "held", None):  # what the read found is held (the fused current-first)
        lane.held = {**lane.held, **read.held}
    items = items_ranked(item_hits, lane, read)
    if CAPPED_ALONE and ranked[0].sessions:
        ranked[0] = messages_ranked(lane, {(h["source"], h["session_id"]) for h in item_hits}, items.gate)
    # the rules below read the fused order's first PAGE_HITS at least, whatever the limit
    fused = fuse(conn, [items] + ranked, max(limit, PAGE_HITS), explain=explain, arrange=arrange)
    if MORE_WORDS_HELD and lane:
        fused = more_words_held_first(fused, lane, read, item_hits)
    if ITEMS_ON_NEAR_TIE and lane:
        fused = items_on_near_ties(conn, query, fused, item_hits, lane, read)
    if PAGE_WORDS and lane:
        fused = page_words_first(conn, fused, lane, time_budget_ms)
    if NAMES_READ and lane:
        fused = names_read_first(conn, query, fused, lane, time_budget_ms)
    hits = Hits((current_first(fused, item_hits, lane, reorder, conn=conn) if reorder else fused)[:limit])
    hits.cut = lane.cut or getattr(item_hits, "cut", False) or getattr(read, "cut", False)
    hits.notes = notes
    return hits


def more_words_held_first(hits: list[dict], lane, read: dict | None = None,
                          item_hits: list[dict] | None = None) -> list[dict]:
    """MORE_WORDS_HELD: one pass down the fused order; a hit whose transcript holds every query
    word the hit above it holds and more (the lane's terms and the read's, lane.held), at a higher
    evidence, swaps with it, and the pair is passed (each session moves at most one place); with
    MORE_WORDS_NEAR_TIE also at an evidence within NEAR_TIE of it when the items lane (`item_hits`)
    ranks it higher. Not
    when its words are all common ones (read at their newest rows, each scoring alike: its
    evidence is then a count of alike scores, not a weighing)."""
    evidence = {**(getattr(lane, "evidence", None) or {}), **(read or {})}
    held = getattr(lane, "held", None) or {}
    capped = set(lane[0].capped) if lane else set()
    items_rank: dict[tuple[str, str], int] = {}
    for h in item_hits or ():
        items_rank.setdefault((h["source"], h["session_id"]), len(items_rank) + 1)
    unranked = len(items_rank) + 1
    out = list(hits)
    i = 1
    while i < len(out):
        upper, lower = ((h["source"], h["session_id"]) for h in out[i - 1:i + 1])
        ours, theirs = set(held.get(lower, ())), set(held.get(upper, ()))
        ev, above = evidence.get(lower, 0.0), evidence.get(upper, 0.0)
        near = MORE_WORDS_NEAR_TIE and ev > 0 and ev >= (1 - NEAR_TIE) * above \
            and items_rank.get(lower, unranked) < items_rank.get(upper, unranked)
        if theirs < ours and not ours <= capped and (ev > above or near):
            out[i - 1], out[i] = out[i], out[i - 1]
            if isinstance(out[i - 1].get("explain"), dict):
                out[i - 1]["explain"]["placed"] = {"rule": "more_words_held", "before": out[i]["id"],
                                                   "held_terms": sorted(ours)}
            i += 2
        else:
            i += 1
    return out


def items_on_near_ties(conn: apsw.Connection, query: str, hits: list[dict], item_hits: list[dict], lane,
                       read: dict | None = None) -> list[dict]:
    """ITEMS_ON_NEAR_TIE: one pass down the fused order; a hit the items lane ranks before the hit
    just above it swaps with it, and the pair is passed (each session moves at most one place),
    when the transcripts tie on both of seed 004's counts though they hold different words (as
    many of the query's words, the lane's terms and the read's, lane.held, not the same ones; the
    lower one's evidence within NEAR_TIE of the upper's), and the tie is not known: the lower
    one's item holds more of the query's words than the upper one's (item_words()), among them a
    common word (read at its newest rows only) its transcript was not seen to hold."""
    evidence = {**(getattr(lane, "evidence", None) or {}), **(read or {})}
    held = getattr(lane, "held", None) or {}
    capped = set(lane[0].capped)
    if not capped:
        return hits
    first: dict[tuple[str, str], tuple[int, dict]] = {}  # each session's items rank and best item
    for h in item_hits:
        first.setdefault((h["source"], h["session_id"]), (len(first) + 1, h))
    words = None
    out = list(hits)
    i = 1
    while i < len(out):
        upper, lower = ((h["source"], h["session_id"]) for h in out[i - 1:i + 1])
        ours, theirs = evidence.get(lower, 0.0), evidence.get(upper, 0.0)
        ours_held, theirs_held = set(held.get(lower, ())), set(held.get(upper, ()))
        if (lower in first and upper in first and first[lower][0] < first[upper][0]
                and ours > 0 and ours >= (1 - NEAR_TIE) * theirs
                and len(ours_held) == len(theirs_held) and ours_held != theirs_held):
            if words is None:
                words = item_words(conn, query)
            in_item, in_upper_item = words(first[lower][1], first[upper][1])
            if len(in_item) > len(in_upper_item) and (in_item & capped) - ours_held:
                out[i - 1], out[i] = out[i], out[i - 1]
                if isinstance(out[i - 1].get("explain"), dict):
                    out[i - 1]["explain"]["placed"] = {"rule": "items_on_near_tie", "before": out[i]["id"],
                                                       "evidence_share": ours / theirs if theirs else 1.0,
                                                       "item_terms": sorted(in_item), "held_terms": sorted(ours_held)}
                i += 2
                continue
        i += 1
    return out


def names_read_first(conn: apsw.Connection, query: str, hits: list[dict], lane, time_budget_ms: int) -> list[dict]:
    """NAMES_READ: the query's names the lane left out (a phrase of common words: lane.names and
    the lane's left_out) are looked up in the transcript of each hit of the fused order (FTS5's
    match within the id range of each of the session's items, the lane's filters; the first match
    ends it), and the hits holding more of them go first, each group in the fused order. A hit
    found holding a name holds it for the fused current-first too (lane.held: its names rule). A
    hit whose transcript lacks a part of the name that the lane read whole (not common) is not
    read: it cannot hold the name."""
    names = sorted(set(getattr(lane, "names", None) or ()) & set(lane[0].left_out))
    if not names or mq.backend(conn) is not None:
        return hits
    read_whole = set(getattr(lane, "weights", None) or ()) - set(lane[0].capped)
    parts = {name: {t.text for t in mq.terms_for(conn, query) if t.part_of == name} & read_whole for name in names}
    read = TranscriptRead(conn, lane)
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    with budget(conn, time_budget_ms):
        try:
            for h in hits:
                key = (h["source"], h["session_id"])
                if key in found:
                    continue
                have = set((getattr(lane, "held", None) or {}).get(key, _NONE))
                found[key] = tuple(name for name in names if parts[name] <= have
                                   and read.session_holds(key, '"' + name.replace('"', '""') + '"'))
        except apsw.InterruptError:
            return hits  # out of work: the fused order stands
    if len({len(f) for f in found.values()}) < 2:
        return hits  # every hit holds as many of the names: nothing to tell apart
    held = getattr(lane, "held", None)
    if held is not None:
        lane.held = {**held, **{k: frozenset(held.get(k, ())) | frozenset(f) for k, f in found.items() if f}}
    out = sorted(hits, key=lambda h: -len(found[(h["source"], h["session_id"])]))
    for before, h in zip(hits, out):
        if h is not before and isinstance(h.get("explain"), dict):
            h["explain"]["placed"] = {"rule": "names_read", "names": list(found[(h["source"], h["session_id"])])}
    return out


def page_words_first(conn: apsw.Connection, hits: list[dict], lane, time_budget_ms: int) -> list[dict]:
    """PAGE_WORDS: when the lane read some of the query's words at their newest rows only
    (lane.common), each hit's transcript is read for those it was not seen to hold (FTS5's match
    within the id range of each of the session's items, the lane's filters; the first match ends
    it). A query word held by fewer than half of the hits tells them apart; the hits holding one
    go before the hits holding none, each group in the fused order."""
    common = getattr(lane, "common", None) or {}
    if not common or mq.backend(conn) is not None:
        return hits
    held = getattr(lane, "held", None) or {}
    # each hit's query terms (a word as written is its own): the lane's, and what the read finds
    words = {key: set(held.get(key, ())) for key in dict.fromkeys((h["source"], h["session_id"]) for h in hits)}
    read = TranscriptRead(conn, lane)
    with budget(conn, time_budget_ms):
        try:
            for t in common:  # word by word: a word half the hits hold tells none apart, and its read stops
                holding = sum(t in have for have in words.values())
                for key, have in words.items():
                    if holding >= len(words) / 2:
                        break
                    if t in have:
                        continue
                    if read.session_holds(key, common[t][1]):
                        have.add(t)
                        holding += 1
        except apsw.InterruptError:
            return hits  # out of work: the fused order stands
    spread: dict[str, int] = {}
    for have in words.values():
        for t in have:
            spread[t] = spread.get(t, 0) + 1
    telling = {t for t, n in spread.items() if n < len(words) / 2}
    tells = {key: sorted(have & telling) for key, have in words.items()}
    out = [h for h in hits if tells[(h["source"], h["session_id"])]]
    out += [h for h in hits if not tells[(h["source"], h["session_id"])]]
    for before, h in zip(hits, out):
        if h is not before and tells[(h["source"], h["session_id"])] and isinstance(h.get("explain"), dict):
            h["explain"]["placed"] = {"rule": "page_words", "words": tells[(h["source"], h["session_id"])]}
    return out


def item_words(conn: apsw.Connection, query: str) -> Callable[..., tuple[set[str], ...]]:
    """The query's ranking words (_ranking: what the messages lane ranks by) each of some item
    hits' indexed text holds, as the items' index matches them (current.terms_held, one read for
    the hits together)."""
    from jezero.query.search import library_tokenizer

    tokenizer = library_tokenizer(conn)
    terms = [t for t in parse_terms(query, tokenizer) if t.part_of is None and _ranking(t)]

    def held_by(*hits: dict) -> tuple[set[str], ...]:
        held = current.terms_held(conn, [h["id"] for h in hits], terms, tokenizer)
        return tuple(held[h["id"]] for h in hits)
    return held_by


class TranscriptRead:
    """The bounded read of a session's own messages that READ_UNREAD, PAGE_WORDS and NAMES_READ
    share: whether an FTS5 expression matches within the id range of an item's messages, under
    the lane's filters (the first match ends it); a session's items' ranges are read once."""

    def __init__(self, conn: apsw.Connection, lane):
        self.conn = conn
        where, self.args = lane.filters.sql()
        # (`+m.item_id`: the messages' item index is no use here, FTS5 drives the join, but with the
        # index in view SQLite prepared the statement again at each new item bound, ~7 us a lookup.)
        self.sql = ("SELECT 1 FROM messages_fts CROSS JOIN messages AS m ON m.id = messages_fts.rowid "
                    "WHERE messages_fts MATCH ? AND messages_fts.rowid BETWEEN ? AND ? AND +m.item_id = ?"
                    f"{' AND ' + where if where else ''} LIMIT 1")
        self.ranges: dict[tuple[str, str], list] = {}

    def item_holds(self, item: int, lo: int, hi: int, expression: str) -> bool:
        return self.conn.execute(self.sql, [expression, lo, hi, item, *self.args]).fetchone() is not None

    def session_holds(self, key: tuple[str, str], expression: str) -> bool:
        if key not in self.ranges:
            self.ranges[key] = self.conn.execute("SELECT item_id, min(id), max(id) FROM messages WHERE source = ? "
                                                 "AND session_id = ? GROUP BY item_id", key).fetchall()
        return any(self.item_holds(item, lo, hi, expression) for item, lo, hi in self.ranges[key])


def unread_evidence(conn: apsw.Connection, lane, item_hits: list[dict], time_budget_ms: int) -> dict:
    """READ_UNREAD: the evidence of the items lane's first READ_SESSIONS sessions that the
    messages lane never read (READ_SEEN: also those it read in part), for the common terms it read
    at their newest LANE_MAX_ROWS only that are names or parts of one (READ_NAMES), or plain words
    held by under WORDS_SPREAD of the sessions within the filters (READ_WORDS). Each term is
    looked up in that session's own messages: FTS5's match within the id range of each of its
    items the items lane hit (a bounded read of one session; the first match ends it; a part of a
    name found whole is held). A term found there scores what each of its messages scored in the
    lane; the session's evidence is then what the lane computes (its terms' scores summed, times
    the weighted share of the query's words it holds to COVERAGE_POWER). Only the sessions that
    gain are returned, by (source, session_id); {} when every term was read whole or on a backend
    ranking the messages itself; an empty Cut when out of work."""
    common = getattr(lane, "common", None) if lane else None
    if not common or mq.backend(conn) is not None:
        return {}
    if READ_NAMES:  # names, and with READ_WORDS the plain words held by under half the sessions
        spread = (getattr(lane, "spread", None) or {}) if READ_WORDS else None
        common = {t: c for t, c in common.items()
                  if c[2] or (spread is not None and spread.get(t, 0.0) < WORDS_SPREAD)}
        if not common:
            return {}
    evidence, held, weights = lane.evidence, lane.held, lane.weights
    whole = sum(weights.values())
    read = TranscriptRead(conn, lane)

    def share(terms) -> float:
        if not COVERAGE_POWER or whole <= 0:
            return 1.0
        return (sum(weights.get(t, 0.0) for t in terms) / whole) ** COVERAGE_POWER

    out = Read()
    items: dict[tuple[str, str], list[int]] = {}
    ranked: dict[tuple[str, str], None] = {}  # the items lane's sessions, in its order
    for h in item_hits:
        key = (h["source"], h["session_id"])
        if key not in ranked and len(ranked) >= READ_SESSIONS:
            continue
        ranked.setdefault(key)
        if READ_SEEN or key not in evidence:  # else the lane read it: its evidence stands
            items.setdefault(key, []).append(h["id"])
    if not items:
        return out
    with budget(conn, time_budget_ms):
        try:
            ids = [i for found in items.values() for i in found]
            ranges = {r[0]: (r[1], r[2]) for r in conn.execute(
                f"SELECT item_id, min(id), max(id) FROM messages WHERE item_id IN ({','.join('?' * len(ids))}) "
                "GROUP BY item_id", ids)}
            for key, found_items in items.items():
                have = held.get(key, _NONE)
                found: list[str] = []
                for t in sorted(common, key=lambda t: common[t][3] is not None):  # whole names first
                    if t in have:
                        continue
                    if common[t][3] in found or any(  # a part of a name found whole is held
                            read.item_holds(i, *ranges[i], common[t][1]) for i in found_items if i in ranges):
                        found.append(t)
                if not found:
                    continue
                before = share(have)
                raw = evidence.get(key, 0.0) / before if before > 0 else 0.0
                raw += sum(common[t][0] for t in found)
                out[key] = raw * share(set(have) | set(found))
                out.held[key] = frozenset(have) | frozenset(found)
                out.found[key] = tuple(found)
        except apsw.InterruptError:
            out = Cut()  # out of work: the lane's own evidence stands, and the answer says it was cut
    return out


class Read(dict):
    """unread_evidence()'s answer: each session's evidence, and in `held` the terms its transcript
    holds (the lane's and those the read found)."""

    def __init__(self):
        super().__init__()
        self.held: dict[tuple[str, str], frozenset] = {}  # the lane's terms and the read's
        self.found: dict[tuple[str, str], tuple[str, ...]] = {}  # the read's alone


class Cut(Read):
    """unread_evidence() out of work: nothing read, and the search's answer is marked cut."""

    cut = True


def current_first(hits: list[dict], item_hits: list[dict], lane: list[LaneHit],
                  reorder: Callable[[list[dict], Callable | None, float], list[dict]], *,
                  conn: apsw.Connection | None = None) -> list[dict]:
    """The current decision first, over the fused order. The messages lane places the first
    session of a decision chain high (it states the subject at length, in the words people ask
    with), above the short revision the items lane had moved first. The rule (current.py) weighs
    each hit's score, so each hit carries its session's standing (its items relevance, or with
    LEAD_BY_EITHER_LANE its best share of either lane's best) while it runs; a session only
    the messages found has none, and the reorder never moves a hit before it (its score reads as
    unbounded; only current.newer_on_the_query, below, may). A newer hit
    moves only when its transcript holds CURRENT_EVIDENCE of the lane's best evidence, every name
    of the query the anchor's transcript holds and CURRENT_COVERAGE of the anchor's query terms
    (`reorder(hits, may_move, move_share)` checks the last two per pair, and the subject at
    FUSED_MOVE_SHARE). The lead the rule allows (current.MAX_LEAD) is read, with
    LEAD_BY_EITHER_LANE, in whichever lane ranks the hit best (standing()). Then, given `conn`,
    where an anchor's item does not say the query words its transcript holds (a fact said in
    passing), the newer session whose transcript holds them all comes first
    (current.newer_on_the_query, TRANSCRIPT_SUBJECT). With UNFOUND_ANCHOR an anchor the items
    lane did not find is left to that rule alone: its item's subject is not the query's."""
    evidence = getattr(lane, "evidence", None) if lane else None
    lane_best = max(evidence.values(), default=0.0) if evidence else 0.0
    relevance: dict[tuple[str, str], float] = {}
    items_score: dict[tuple[str, str], float] = {}
    for h in item_hits:
        key = (h["source"], h["session_id"])
        held = not evidence or evidence.get(key, 0.0) >= CURRENT_EVIDENCE * lane_best
        relevance.setdefault(key, (h.get("score") or 0.0) if held else 0.0)
        items_score.setdefault(key, h.get("score") or 0.0)
    fused_score = {h["id"]: h["score"] for h in hits}
    items_best = max((h.get("score") or 0.0 for h in item_hits), default=0.0)

    def standing(key) -> float:
        """What MAX_LEAD compares (LEAD_BY_EITHER_LANE): the session's share of the best in the
        lane that ranks it best, items or messages; unbounded for a session only the messages found
        (the reorder moves nothing before it), 0 for one whose transcript holds too little (never
        moved)."""
        held_relevance = relevance.get(key)
        if held_relevance is None:
            return math.inf
        if not held_relevance or not LEAD_BY_EITHER_LANE or items_best <= 0 or lane_best <= 0:
            return held_relevance
        return max(held_relevance / items_best, evidence.get(key, 0.0) / lane_best)

    def revision_standing(key) -> float:
        """What MAX_LEAD compares for a newer hit whose decision names the anchor's choice as
        replaced (current.NAMED_REVISION): its standing without CURRENT_EVIDENCE, since such a
        revision says the new choice in other words than its predecessor (but its transcript must
        hold some of the query's words)."""
        if key not in relevance or not evidence or items_best <= 0 or lane_best <= 0 or not evidence.get(key):
            return standing(key)
        return max(items_score[key] / items_best, evidence[key] / lane_best)

    for h in hits:
        key = (h["source"], h["session_id"])
        h["score"] = standing(key)
        h["revision_score"] = revision_standing(key)
    held, names = (getattr(lane, "held", None), getattr(lane, "names", None)) if lane else (None, None)

    def holds_enough(hit: dict, anchor: dict) -> bool:
        """A newer hit moves only when its transcript holds every name of the query the anchor's
        holds, and at least CURRENT_COVERAGE of the anchor's query terms."""
        if not holds_names(hit, anchor):
            return False
        if UNFOUND_ANCHOR and (anchor["source"], anchor["session_id"]) not in relevance:
            return False
        theirs = held.get((anchor["source"], anchor["session_id"]), _NONE)
        ours = held.get((hit["source"], hit["session_id"]), _NONE)
        return not theirs or len(theirs & ours) >= CURRENT_COVERAGE * len(theirs)

    left_names = names & set(lane[0].left_out) if lane and names and NAMES_LEFT_OUT else _NONE

    def holds_names(hit: dict, anchor: dict) -> bool:
        """The names rule alone (what a revision naming the anchor's choice must meet)."""
        if not NAMES_RULE:
            return True
        if left_names and (hit["source"], hit["session_id"]) not in relevance:
            return False
        theirs = held.get((anchor["source"], anchor["session_id"]), _NONE)
        ours = held.get((hit["source"], hit["session_id"]), _NONE)
        return (theirs & names) <= ours

    moved = reorder(hits, holds_enough if held else None, FUSED_MOVE_SHARE if held else None,
                    holds_names if held else None)
    for h in moved:
        h["score"] = fused_score[h["id"]]
        h.pop("revision_score", None)
    if CAPPED_REVISION and held and lane:
        moved = capped_revisions(moved, item_hits, held, capped_words(lane[0].capped), holds_names)
    if current.TRANSCRIPT_SUBJECT and held and evidence and conn is not None:
        # the newer session holding the query's words, where the items do not say them (current.py)
        moved = current.newer_on_the_query(conn, moved, held, evidence, lane[0].capped if lane else ())
    return moved


def capped_words(capped) -> set[str]:
    """The lane's common words (`capped`) and, with WRITTEN_STAYS_CAPPED, the labels of their
    written forms (written_forms(): `"word"`), for CAPPED_REVISION."""
    capped = set(capped)
    return capped | {written_label(w) for w in capped} if WRITTEN_FORM and WRITTEN_STAYS_CAPPED else capped


def capped_revisions(hits: list[dict], item_hits: list[dict], held: dict, capped: set,
                     holds_names: Callable[[dict, dict], bool]) -> list[dict]:
    """CAPPED_REVISION: each revision the items lane's current-first placed before an anchor
    (item_hits.placed) goes just before that anchor in the fused order, when the anchor stands
    above it, the revision's transcript holds query words and only common ones (`capped`: read
    at their newest rows, scoring alike; `held`: the lane's and the read's terms per session), and
    it holds every name of the query the anchor's transcript holds (`holds_names`)."""
    placed = getattr(item_hits, "placed", None) or {}
    if not placed or not capped:
        return hits
    by_id = {h["id"]: (h["source"], h["session_id"]) for h in item_hits}
    out = list(hits)
    for revision_id, anchor_id in placed.items():
        rev_key, anchor_key = by_id.get(revision_id), by_id.get(anchor_id)
        where = {(h["source"], h["session_id"]): i for i, h in enumerate(out)}
        if rev_key is None or anchor_key is None or rev_key not in where or anchor_key not in where:
            continue
        r, a = where[rev_key], where[anchor_key]
        terms = held.get(rev_key, _NONE)
        if r < a or not terms or not set(terms) <= capped or not holds_names(out[r], out[a]):
            continue
        hit = out.pop(r)
        out.insert(a, hit)
        if isinstance(hit.get("explain"), dict):
            hit["explain"]["placed"] = {"rule": "capped_revision", "before": out[a + 1]["id"],
                                        "held_terms": sorted(terms)}
    return out
