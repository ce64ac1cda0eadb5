"""HippoRAG 2's retrieval (OSU-NLP-Group/HippoRAG @ 040f3c78, `src/hipporag/HippoRAG.py`), restated;
see README.md.

Restated, in the authors' order and with their keys and quirks: `index` (`text_processing` of every
triple, `extract_entity_nodes`, `flatten_facts`), `add_fact_edges`, `add_passage_edges`,
`add_synonymy_edges` (with `utils/embed_utils.retrieve_knn` as a full sort), `add_new_edges` (every
directed pair of `node_to_node_stats` added to an undirected graph), `get_fact_scores`,
`rerank_facts` (the filter passed in as a function), `graph_search_with_fact_entities`,
`get_top_k_weights`, `dense_passage_retrieval`, `run_ppr`, and `retrieve`'s fallback to dense
retrieval when no fact is kept; `utils/misc_utils.py` for `text_processing`, `min_max_normalize` and
`compute_mdhash_id`. Models and stores are replaced by plain inputs: `embed(texts)` gives unit
vectors, `fact_vec(fact)` a processed fact's vector, `passage_vectors` the passages'. python-igraph's
PRPACK PageRank is replaced by networkx's `pagerank` on the same multigraph (parallel edges
summed, dangling mass by the reset).
"""

import re
from hashlib import md5

import networkx as nx
import numpy as np


def text_processing(text):
    if isinstance(text, list):
        return [text_processing(t) for t in text]
    return re.sub("[^A-Za-z0-9 ]", " ", str(text).lower()).strip()


def compute_mdhash_id(content, prefix=""):
    return prefix + md5(content.encode()).hexdigest()


def min_max_normalize(x):
    return (x - np.min(x)) / (np.max(x) - np.min(x))


class HippoRAGReference:
    def __init__(
        self,
        passages,
        passage_vectors,
        chunk_raw_triples,
        embed,
        fact_vec,
        linking_top_k=5,
        damping=0.5,
        passage_node_weight=0.05,
        synonymy_edge_topk=2047,
        synonymy_edge_sim_threshold=0.8,
    ):
        """passages: [(chunk_id, text)] with their vectors;
        chunk_raw_triples: chunk_id -> [[s, p, o], ...] as extracted."""
        self.embed, self.fact_vec = embed, fact_vec
        self.linking_top_k, self.damping, self.passage_node_weight = linking_top_k, damping, passage_node_weight
        self.topk, self.threshold = synonymy_edge_topk, synonymy_edge_sim_threshold
        self.passage_node_keys = [compute_mdhash_id(cid, "chunk-") for cid, _ in passages]
        self.key_to_chunk = {compute_mdhash_id(cid, "chunk-"): cid for cid, _ in passages}
        self.passage_embeddings = np.asarray(passage_vectors, dtype=np.float32)
        chunk_triples = [[text_processing(t) for t in chunk_raw_triples.get(cid, [])] for cid, _ in passages]
        entity_nodes, chunk_triple_entities = self.extract_entity_nodes(chunk_triples)
        self.facts = list(dict.fromkeys(tuple(t) for ts in chunk_triples for t in ts))  # flatten_facts
        self.node_to_node_stats, self.ent_node_to_chunk_ids = {}, {}
        self.add_fact_edges(self.passage_node_keys, chunk_triples)
        self.add_passage_edges(self.passage_node_keys, chunk_triple_entities)
        self.entity_rows = {compute_mdhash_id(e, "entity-"): e for e in entity_nodes}
        self.add_synonymy_edges()
        self.build_graph()

    @staticmethod
    def extract_entity_nodes(chunk_triples):
        chunk_triple_entities = []
        for triples in chunk_triples:
            ents = set()
            for t in triples:
                if len(t) == 3:
                    ents.update([t[0], t[2]])
            chunk_triple_entities.append(list(ents))
        return list(np.unique([e for ents in chunk_triple_entities for e in ents])), chunk_triple_entities

    def add_fact_edges(self, chunk_ids, chunk_triples):
        for chunk_key, triples in zip(chunk_ids, chunk_triples):
            entities_in_chunk = set()
            for triple in triples:
                node_key = compute_mdhash_id(triple[0], "entity-")
                node_2_key = compute_mdhash_id(triple[2], "entity-")
                self.node_to_node_stats[(node_key, node_2_key)] = (
                    self.node_to_node_stats.get((node_key, node_2_key), 0.0) + 1
                )
                self.node_to_node_stats[(node_2_key, node_key)] = (
                    self.node_to_node_stats.get((node_2_key, node_key), 0.0) + 1
                )
                entities_in_chunk.add(node_key)
                entities_in_chunk.add(node_2_key)
            for node in entities_in_chunk:
                self.ent_node_to_chunk_ids[node] = self.ent_node_to_chunk_ids.get(node, set()).union({chunk_key})

    def add_passage_edges(self, chunk_ids, chunk_triple_entities):
        for idx, chunk_key in enumerate(chunk_ids):
            for chunk_ent in chunk_triple_entities[idx]:
                self.node_to_node_stats[(chunk_key, compute_mdhash_id(chunk_ent, "entity-"))] = 1.0

    def add_synonymy_edges(self):
        keys = list(self.entity_rows)
        vecs = np.asarray(self.embed([self.entity_rows[k] for k in keys]), dtype=np.float32)
        sims = vecs @ vecs.T
        for i, node_key in enumerate(keys):
            entity = self.entity_rows[node_key]
            if len(re.sub("[^A-Za-z0-9]", "", entity)) > 2:
                order = np.argsort(-sims[i], kind="stable")[: self.topk]
                num_nns = 0
                for j in order:
                    nn, score = keys[j], sims[i][j]
                    if score < self.threshold or num_nns > 100:
                        break
                    if nn != node_key and self.entity_rows[nn] != "":
                        self.node_to_node_stats[(node_key, nn)] = score
                        num_nns += 1

    def build_graph(self):
        self.graph = nx.MultiGraph()
        self.graph.add_nodes_from(list(self.entity_rows) + self.passage_node_keys)
        for (a, b), weight in self.node_to_node_stats.items():
            if a != b:
                self.graph.add_edge(a, b, weight=float(weight))

    def get_fact_scores(self, query_vec):
        fact_embeddings = np.asarray([self.fact_vec(f) for f in self.facts])
        return min_max_normalize(fact_embeddings @ query_vec)

    def rerank_facts(self, query, query_fact_scores, recognition):
        link_top_k = self.linking_top_k
        if len(query_fact_scores) <= link_top_k:
            candidate_fact_indices = np.argsort(query_fact_scores)[::-1].tolist()
        else:
            candidate_fact_indices = np.argsort(query_fact_scores)[-link_top_k:][::-1].tolist()
        candidate_facts = [self.facts[i] for i in candidate_fact_indices]
        kept = recognition(query, candidate_facts)  # positions into candidate_facts, the filter's order
        return [candidate_fact_indices[i] for i in kept][:link_top_k], [candidate_facts[i] for i in kept][:link_top_k]

    def dense_passage_retrieval(self, query_vec):
        scores = min_max_normalize(self.passage_embeddings @ query_vec)
        sorted_doc_ids = np.argsort(scores)[::-1]
        return sorted_doc_ids, scores[sorted_doc_ids.tolist()]

    def graph_search_with_fact_entities(self, query_vec, query_fact_scores, top_k_facts, top_k_fact_indices):
        phrase_weights, occurs, linking_score_map = {}, {}, {}
        phrases_and_ids = []
        for rank, f in enumerate(top_k_facts):
            fact_score = query_fact_scores[top_k_fact_indices[rank]]
            for phrase in [f[0].lower(), f[2].lower()]:
                phrase_key = compute_mdhash_id(phrase, "entity-")
                if phrase_key in self.entity_rows:
                    weighted = fact_score
                    if len(self.ent_node_to_chunk_ids.get(phrase_key, set())) > 0:
                        weighted /= len(self.ent_node_to_chunk_ids[phrase_key])
                    phrase_weights[phrase_key] = phrase_weights.get(phrase_key, 0.0) + weighted
                    occurs[phrase_key] = occurs.get(phrase_key, 0) + 1
                    if (phrase, phrase_key) not in phrases_and_ids:
                        phrases_and_ids.append((phrase, phrase_key))
        phrase_weights = {k: w / occurs[k] for k, w in phrase_weights.items()}
        for phrase, key in phrases_and_ids:
            linking_score_map[phrase] = float(np.mean([phrase_weights[key]]))
        # get_top_k_weights
        linking_score_map = dict(
            sorted(linking_score_map.items(), key=lambda x: x[1], reverse=True)[: self.linking_top_k]
        )
        top_keys = {compute_mdhash_id(p, "entity-") for p in linking_score_map}
        node_weights = {k: w for k, w in phrase_weights.items() if k in top_keys}
        self.phrase_seed_weights = {self.entity_rows[k]: w for k, w in node_weights.items()}
        dpr_ids, dpr_scores = self.dense_passage_retrieval(query_vec)
        normalized = min_max_normalize(dpr_scores)
        for i, doc_id in enumerate(dpr_ids.tolist()):
            key = self.passage_node_keys[doc_id]
            node_weights[key] = node_weights.get(key, 0.0) + normalized[i] * self.passage_node_weight
        return self.run_ppr(node_weights)

    def run_ppr(self, reset):
        reset = {k: (0.0 if np.isnan(v) or v < 0 else float(v)) for k, v in reset.items()}
        scores = nx.pagerank(
            self.graph, alpha=self.damping, personalization=reset, weight="weight", tol=1e-13, max_iter=100_000
        )
        doc_scores = np.array([scores[k] for k in self.passage_node_keys])
        sorted_doc_ids = np.argsort(doc_scores)[::-1]
        return sorted_doc_ids, doc_scores[sorted_doc_ids.tolist()]

    def retrieve(self, query, query_vec, recognition=lambda q, facts: list(range(len(facts)))):
        """Chunk ids best first and their scores, as `HippoRAG.retrieve` ranks them."""
        query_fact_scores = self.get_fact_scores(query_vec)
        top_k_fact_indices, top_k_facts = self.rerank_facts(query, query_fact_scores, recognition)
        self.phrase_seed_weights = {}
        if len(top_k_facts) == 0:
            ids, scores = self.dense_passage_retrieval(query_vec)
        else:
            ids, scores = self.graph_search_with_fact_entities(
                query_vec, query_fact_scores, top_k_facts, top_k_fact_indices
            )
        return [self.key_to_chunk[self.passage_node_keys[i]] for i in ids.tolist()], [float(x) for x in scores]
