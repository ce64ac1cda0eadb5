"""KG2RAG's reference post-processors (nju-websoft/KG2RAG @ 7d626c77, code/util/kg_post_processor.py,
as wired by code/kg_rag_distractor.py), restated for the HotpotQA format; see README.md.

A node is (id, score) with id "title##sentence_index"; `doc2kg[title][index]` lists the triplets
(h, r, t) of that chunk; `text_of[id]` is its text ("title: sentence"); `rerank(query, texts)`
stands for FlagReranker.compute_score. llama-index's nodes, the models and files are left out.
"""

import string

import networkx as nx


def ngram_overlap(span, sent, n=3):
    while (len(span) < n) or (len(sent) < n):
        n -= 1
    if n <= 0:
        return 0.0
    span, sent = span.lower(), sent.lower()
    span_tokens = "".join(tok for tok in span.split() if tok not in string.punctuation)
    sent_tokens = "".join(tok for tok in sent.split() if tok not in string.punctuation)
    a = {span_tokens[i : i + n] for i in range(len(span_tokens) - n + 1)}
    b = {sent_tokens[i : i + n] for i in range(len(sent_tokens) - n + 1)}
    return float((len(a & b) + 0.01) / (len(a) + 0.01))


def _split(node_id):
    ent, seq = node_id.split("##")
    return ent, seq


def expand(nodes, doc2kg, chunks_index, ents):
    """KGRetrievePostProcessor._postprocess_nodes (hotpotqa, hops = 1): entities are document
    titles; chunks of related titles join with an entity-averaged score. Returns nodes + added."""
    top_k = len(nodes)
    retrieved_ids, retrieved_ents, highly = set(), set(), set()
    score_of, ent_count, ent_score = {}, {}, {}
    for i, (nid, sc) in enumerate(nodes):
        retrieved_ids.add(nid)
        score_of[nid] = sc
        entity, _ = _split(nid)
        if i < top_k // 2 and entity in retrieved_ents:
            highly.add(entity)
        retrieved_ents.add(entity)
        ent_count[entity] = ent_count.get(entity, 0) + 1
        ent_score[entity] = ent_score.get(entity, 0.0) + sc
    for e in sorted(ent_count, key=lambda x: ent_score[x] / ent_count[x], reverse=True)[:2]:
        highly.add(e)

    def bump(e, by):
        ent_count[e] = ent_count.get(e, 0) + 1
        ent_score[e] = ent_score.get(e, 0.0) + by

    additional = set()
    for nid, sc in nodes:
        entity, seq = _split(nid)
        for h, _r, t in doc2kg.get(entity, {}).get(seq, []):
            for x in (h, t):
                if x in ents and x not in retrieved_ents:
                    additional.add(x)
                    bump(x, sc)
    additional |= retrieved_ents
    related = set()
    for _hop in range(1):
        related |= additional
        temp, additional = set(additional), set()
        for ent in temp:
            for seq, kg in doc2kg.get(ent, {}).items():
                if not kg or f"{ent}##{seq}" in retrieved_ids:
                    continue
                for h, _r, t in kg:
                    for x in (h, t):
                        if x in ents and x not in related:
                            additional.add(x)
                            bump(x, ent_score[ent] / ent_count[ent])
    related |= additional
    avg = sum(sc for _, sc in nodes) / len(nodes)
    retrieved_ents -= highly
    added = []
    for ent in related - retrieved_ents:
        if ent not in chunks_index or not chunks_index[ent] or ent not in doc2kg:
            continue
        for seq in chunks_index[ent]:
            cid = f"{ent}##{seq}"
            if cid in retrieved_ids:
                continue
            sc = (ent_score[ent] + avg) / (ent_count[ent] + 1) if ent in ent_score else 0.0
            added.append((cid, sc))
    added.sort(key=lambda x: x[1], reverse=True)
    return list(nodes) + added


def graph_filter(nodes, doc2kg, text_of, query, rerank, topk):
    """GraphFilterPostProcessor._postprocess_nodes (use_tpt False, as for HotpotQA). Returns the
    candidate chunk lists (one per tree, components by size), their scores, and the wanted ids."""
    g = nx.MultiGraph()
    ents, rels = set(), set()
    for nid, _ in nodes:
        ents.add(_split(nid)[0])
    for nid, sc in nodes:
        ent, seq = _split(nid)
        for h, r, t in doc2kg.get(ent, {}).get(seq, []):
            h, r, t = h.strip(), r.strip(), t.strip()
            ents |= {h, t}
            rels.add(r)
            g.add_edge(h, t, rel=r, source=nid, weight=sc)
    mentioned = {e for e in ents if ngram_overlap(e, query) >= 0.90}
    mentioned_rels = {r for r in rels if ngram_overlap(r, query) >= 0.90}
    for nid, _ in nodes:
        ent, seq = _split(nid)
        for h, r, t in doc2kg.get(ent, {}).get(seq, []):
            if h in mentioned and r in mentioned_rels and t not in mentioned:
                mentioned.add(t)
            if t in mentioned and r in mentioned_rels and h not in mentioned:
                mentioned.add(h)
    ml = list(mentioned)
    for i in range(len(ml)):
        for j in range(i + 1, len(ml)):
            if g.has_edge(ml[i], ml[j]) or g.has_edge(ml[j], ml[i]):
                continue
            g.add_edge(ml[i], ml[j], rel="cooccurrence", source="query", weight=0.0)
    cand_lists = []
    for wcc in sorted(nx.connected_components(g), key=len, reverse=True):
        if len(wcc) > 1:
            mst = nx.maximum_spanning_tree(g.subgraph(wcc), weight="weight")
            cand_lists.append([d["source"] for _, _, d in mst.edges(data=True) if d["source"] != "query"])
        else:
            for _, _, d in sorted(g.subgraph(wcc).edges(data=True), key=lambda x: x[2]["weight"], reverse=True):
                if d["source"] != "query":
                    cand_lists.append([d["source"]])
                    break
    strs = ["".join(text_of[c] for c in cands) for cands in cand_lists]
    if not strs:
        scores = rerank(query, [text_of[nid] for nid, _ in nodes])
        order = sorted(range(len(scores)), key=lambda x: scores[x], reverse=True)
        return cand_lists, [], [nodes[i][0] for i in order[:topk]]
    scores = rerank(query, strs)
    order = sorted(range(len(scores)), key=lambda x: scores[x], reverse=True)
    wanted = []
    for i in order:
        if len(set(wanted) | set(cand_lists[i])) > topk:
            break  # the first misfit ends the selection
        wanted = list(set(wanted + cand_lists[i]))
    if len(wanted) < topk // 2:
        rest = [text_of[nid] for nid, _ in nodes if nid not in wanted]
        if rest:
            sc = rerank(query, rest)
            # as written: positions in the filtered list index the unfiltered `nodes`
            for i in sorted(range(len(sc)), key=lambda x: sc[x], reverse=True)[:topk]:
                if nodes[i][0] not in wanted:
                    wanted.append(nodes[i][0])
                    if len(wanted) >= topk:
                        break
    return cand_lists, [scores[i] for i in range(len(scores))], [nid for nid, _ in nodes if nid in wanted]


def naive_order(ids):
    """NaivePostprocessor (hotpotqa): by the first appearance of each title, then sentence index."""
    first = {}
    for nid in ids:
        first.setdefault(_split(nid)[0], len(first))
    return sorted(ids, key=lambda nid: (first[_split(nid)[0]], int(_split(nid)[1])))
