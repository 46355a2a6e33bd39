/* manifest.c - manifests from the rows' records, in memory or in their input files (see manifest.h). */
#include "manifest.h"

#include "la_alloc.h"
#include "input.h"
#include "normalize.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct manifest_src {
    const la_table *t;
    const la_row *r;
    const uint32_t *rows;
    size_t n, next;
    int fd;               /* the input file open for copying, or -1 */
    uint32_t file;        /* its index in the table */
    char *buf;            /* the block read from that file (when it is not mapped) */
    const char *data;     /* bytes [off, off + len) of that file: buf, or where it is mapped */
    const char *map;      /* the file mapped whole (map_len bytes), or NULL */
    size_t map_len;
    size_t released;      /* its bytes before this offset are let go */
    size_t written;       /* the end of the last line the fills gave from it */
    size_t cap, len;
    uint64_t off;
    char *stage;          /* lines of blocks read over, kept for the pieces not yet written */
    size_t staged;        /* its bytes in use (none at each fill: the pieces before are written) */
} manifest_src;

/* Bytes the staging buffer holds: the lines of rows scattered through a file (one block read
 * each) gather there, to be written with one call rather than one a row. */
#define MANIFEST_STAGE ((size_t)1 << 20)
/* Bytes of lines one fill gives the writer at most (one call of writev): lines that follow each
 * other in a mapped file join into one piece, and one call for the whole 33 MB dev manifest of the
 * 50k x 5k benchmark took from 9 to 80 ms (strace), the 68 calls of at most 1 MiB of such a run
 * 18-23 ms in all. */
#define MANIFEST_WRITE ((size_t)1 << 20)
/* Bytes of a mapped file written over before their pages are let go. */
#define MANIFEST_RELEASE ((size_t)4 << 20)

static void close_file(manifest_src *m)
{
    la_input_unmap(m->map);
    m->map = NULL;
    if (m->fd >= 0) close(m->fd);
    m->fd = -1;
}

/* Open an input file again to copy its lines; mapped whole when it can be (its lines are then
 * written from where they lie, no block read into a buffer first). */
static la_status open_file(manifest_src *m, uint32_t file)
{
    close_file(m);
    m->len = 0;
    m->file = file;
    const char *path = la_table_file_name(m->t, file);
    m->fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (m->fd < 0)
        return la_error(LA_EINPUT, "%s: cannot open it again to copy its rows into the manifests: %s; run the audit again",
                        path ? path : "(input)", path ? strerror(errno) : "no such file");
    struct stat st;
    if (fstat(m->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX / 2) {
        m->map = la_input_map(m->fd, (size_t)st.st_size, path, 0);
        m->map_len = (size_t)st.st_size;
        m->released = m->written = 0;
    }
    return LA_OK;
}

/* Bytes from the line `at` (row m->rows[m->next]) to the end of the last line a block read should
 * take: the lines of the next rows in the same file, while each starts at most LA_MANIFEST_GAP bytes
 * after the one before it ends and the block stays within LA_MANIFEST_BLOCK (at least the line).
 * A manifest of rows scattered through a file (quarantine.jsonl) reads its lines, not the file. */
static size_t block_span(const manifest_src *m, const la_raw_place *at)
{
    uint64_t end = at->offset + at->len;
    for (size_t k = m->next + 1; k < m->n; k++) {
        const la_row *row = &m->r[m->rows[k]];
        la_raw_place p;
        if (row->raw || row->file != m->file || !la_table_raw_place(m->t, m->rows[k], &p)) break;
        if (p.offset < end || p.offset - end > LA_MANIFEST_GAP || p.offset + p.len - at->offset > LA_MANIFEST_BLOCK) break;
        end = p.offset + p.len;
    }
    return (size_t)(end - at->offset);
}

/* Read the block of the file that starts at the line `at`: that line and the next ones block_span
 * takes. */
static la_status read_block(manifest_src *m, const la_raw_place *at, const la_row *row)
{
    const char *path = la_table_file_name(m->t, m->file);
    if (m->map) {
        if (at->offset > m->map_len || at->len > m->map_len - at->offset)
            return la_error(LA_EINPUT, "%s:%u: the file is shorter than when the audit read it; run the audit again", path,
                            row->line);
        m->data = m->map;
        m->off = 0;
        m->len = m->map_len;
        return LA_OK;
    }
    size_t want = block_span(m, at);
    if (want > m->cap) {
        char *b = realloc(m->buf, want);
        if (!b) return la_error(LA_ENOMEM, "out of memory copying the rows of %s", path);
        m->buf = b;
        m->cap = want;
    }
    m->off = at->offset;
    m->len = 0;
    while (m->len < want) {
        ssize_t got = pread(m->fd, m->buf + m->len, want - m->len, (off_t)(at->offset + m->len));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return la_error(LA_EIO, "%s: read error: %s", path, strerror(errno));
        if (got == 0) break;
        m->len += (size_t)got;
    }
    m->data = m->buf;
    if (m->len < at->len)
        return la_error(LA_EINPUT, "%s:%u: the file is shorter than when the audit read it; run the audit again", path,
                        row->line);
    return LA_OK;
}

/* The line of a row kept as a place in its file, checked against its digest. */
static la_status line_of(manifest_src *m, const la_row *row, const la_raw_place *at, const char **line)
{
    const char *p = m->data + (at->offset - m->off);
    uint64_t h[2];
    la_text_hash128(p, at->len, h);
    if ((uint32_t)h[0] != at->check)
        return la_error(LA_EINPUT, "%s:%u: the line is not the one the audit read (the file changed while it ran); run the audit again",
                        la_table_file_name(m->t, m->file), row->line);
    *line = p;
    return LA_OK;
}

static int in_block(const manifest_src *m, uint32_t file, const la_raw_place *at)
{
    return m->fd >= 0 && m->file == file && at->offset >= m->off && at->offset - m->off <= m->len &&
           at->len <= m->len - (at->offset - m->off);
}

/* Before the block is read over: pieces iov[from .. k) (lines in the block and their newlines) copied
 * into the staging buffer as one piece, which joins the piece before it when that one ends where
 * the staged bytes do. Returns the new number of pieces, or -1 when the staging buffer has no room
 * (the pieces are then written first). */
static int stage_pieces(manifest_src *m, struct iovec *iov, int from, int k)
{
    size_t need = 0;
    for (int i = from; i < k; i++) need += iov[i].iov_len;
    if (!m->stage && !(m->stage = malloc(MANIFEST_STAGE))) return -1;
    if (need > MANIFEST_STAGE - m->staged) return -1;
    char *at = m->stage + m->staged;
    for (int i = from, o = 0; i < k; o += (int)iov[i].iov_len, i++) memcpy(at + o, iov[i].iov_base, iov[i].iov_len);
    m->staged += need;
    if (from > 0 && (char *)iov[from - 1].iov_base + iov[from - 1].iov_len == at) {
        iov[from - 1].iov_len += need;
        return from;
    }
    iov[from] = (struct iovec){at, need};
    return from + 1;
}

static int fill(void *ctx, struct iovec *iov, int max, la_status *failed)
{
    static char nl[] = "\n";
    manifest_src *m = ctx;
    int k = 0, in_buf = 0; /* pieces from in_buf on point into the block (or are newlines after them) */
    size_t bytes = 0;
    m->staged = 0;
    /* the mapped pages the writer is done with let go, a few MB at a time: a manifest of a large
     * input keeps no more of it in memory than a block read did */
    if (m->map && m->written >= m->released + MANIFEST_RELEASE) {
        la_input_release(m->map + m->released, m->written - m->released);
        m->released = m->written;
    }
    for (; k + 2 <= max && m->next < m->n && bytes < MANIFEST_WRITE; m->next++) {
        size_t i = m->rows[m->next];
        const la_row *row = &m->r[i];
        const char *line = row->raw;
        size_t len = line ? strlen(line) : 0;
        if (!line) {
            la_raw_place at;
            la_status s = LA_OK;
            if (!la_table_raw_place(m->t, i, &at)) {
                s = la_error(LA_EINTERNAL, "row %zu has neither its record nor its place in a file", i);
            } else if (!in_block(m, row->file, &at)) {
                /* the pieces so far that point into the block are staged, or written first */
                if (k > in_buf) {
                    int staged = stage_pieces(m, iov, in_buf, k);
                    if (staged < 0) return k;
                    k = staged;
                }
                in_buf = k;
                if (m->fd < 0 || m->file != row->file) s = open_file(m, row->file);
                if (s == LA_OK) s = read_block(m, &at, row);
            }
            if (s == LA_OK) s = line_of(m, row, &at, &line);
            if (s != LA_OK) {
                *failed = s;
                return -1;
            }
            len = at.len;
        }
        if (!row->raw && (size_t)(line - m->data) + len < m->len && line[len] == '\n') {
            /* the line and the newline after it in the file: one piece, and one with the piece
             * before when that one ends where it starts (rows that follow each other in the file) */
            bytes += len + 1;
            if (m->map) m->written = (size_t)(line - m->map) + len;
            if (k > in_buf && (const char *)iov[k - 1].iov_base + iov[k - 1].iov_len == line)
                iov[k - 1].iov_len += len + 1;
            else
                iov[k++] = (struct iovec){(void *)line, len + 1};
            continue;
        }
        bytes += len + 1;
        iov[k++] = (struct iovec){(void *)line, len};
        iov[k++] = (struct iovec){nl, 1};
    }
    return k;
}

la_status la_manifest_write(la_outdir *od, const char *name, const la_table *t, const uint32_t *rows, size_t n)
{
    manifest_src m = {.t = t, .r = la_table_rows_const(t), .rows = rows, .n = n, .fd = -1};
    la_status s = la_outdir_write_from(od, name, fill, &m);
    close_file(&m);
    free(m.buf);
    free(m.stage);
    return s;
}

la_status la_manifest_buf(const la_table *t, const uint32_t *rows, size_t n, la_buf *out)
{
    manifest_src m = {.t = t, .r = la_table_rows_const(t), .rows = rows, .n = n, .fd = -1};
    struct iovec iov[64];
    la_status s = LA_OK;
    int k;
    while ((k = fill(&m, iov, 64, &s)) > 0)
        for (int i = 0; i < k; i++) la_buf_putn(out, iov[i].iov_base, iov[i].iov_len);
    if (k < 0 && s == LA_OK) s = la_error(LA_EINTERNAL, "manifest: failed without a reason");
    close_file(&m);
    free(m.buf);
    free(m.stage);
    return s != LA_OK ? s : la_buf_status(out);
}
