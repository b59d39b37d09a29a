"""The fused search's rules: every constant that tunes it, each with the reason it has and the
measurement it was chosen by (benchmarks/retrieval/README.md).

The package's modules read them at call time as `rules.X`, never as a copy taken at import, so a
test or a benchmark changes a rule in one place: `monkeypatch.setattr(rules, "NEAR_TIE", 0)`.
`jezero.query.fused.X` is this module's attribute too (read and written through, see the
package's __init__), so the older spelling changes the same rule.
"""

from __future__ import annotations

from jezero.query import current

LANES = ("items", "messages")
# The semantic lane (query/vectors.py), chosen only when `[semantic]` turns it on. It joins the
# reciprocal rank fusion (fusion.py) with its own weight ([semantic] weight), unscaled: cosine
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
# The rules after fusion (MORE_WORDS_HELD to the fused current-first) read this many of the fused
# order's first hits, and the answer is then cut to the limit (a longer one goes on with the fused
# order's next hits): the page is the same for every limit, so a search for 3 hits gives the first
# 3 of a search for 10, and one for 20 starts with it (with the page cut to 3, `plume parser
# implementation` read three plume sessions holding `plume` alone; until 2026-12-04 a search for 20
# gave the rules 20 hits, and its first 10 could differ from a search for 10's). The default page
# (search's limit).
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
