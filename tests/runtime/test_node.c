/* Which node a rank is on, from WEFT_TOPO_NODE (src/runtime/node.c),
 * without MPI: names from lists and rules, every malformed form with the
 * words of its message, and a rank's index on its node against a count
 * over the lower ranks. */
#include "runtime/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                          \
            fputc('\n', stderr);                                                   \
            failures++;                                                            \
        }                                                                          \
    } while (0)

static weft__msg_t err;

static void expect_name(const char *spec, int rank, int nranks, const char *want)
{
    char name[WEFT__NODE_NAME_MAX] = "";

    EXPECT(weft__node_parse(spec, rank, nranks, name, NULL, &err) == WEFT_OK, "'%s': %s", spec,
           err.msg);
    EXPECT(strcmp(name, want) == 0, "'%s' rank %d of %d: '%s', not '%s'", spec, rank, nranks,
           name, want);
}

static void test_node_names(void)
{
    expect_name("block:node%d:8", 17, 32, "node2");
    expect_name("cyclic:n%d-x:4", 17, 32, "n1-x");
    expect_name("a*2,b,c.d*3", 2, 6, "b");
    expect_name("a*2,b,c.d*3", 5, 6, "c.d");
    expect_name("x", 0, 1, "x");
}

static void test_node_errors(void)
{
    static const struct { const char *spec; int nranks; const char *fragment; } bad[] = {
        {"", 1, "empty"},
        {"a,b", 3, "lists 2 node names for 3 ranks"},
        {"a,,b", 3, "empty or overlong"},
        {"a b", 1, "not allowed"},
        {"a*x", 1, "bad repeat count"},
        {"block:node:8", 1, "exactly one %d"},
        {"block:n%d%d:8", 1, "exactly one %d"},
        {"block:n%s:8", 1, "may only hold %d"},
        {"block:n%d:0", 1, "positive integer"},
        {"block:n%d", 1, "expected block:FORMAT:RANKS_PER_NODE"},
        {"cyclic:n%d", 1, "expected cyclic:FORMAT:NODES"},
        {"block:n/%d:2", 1, "not allowed"},
    };
    char name[WEFT__NODE_NAME_MAX];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        weft_status_t st;

        err.msg[0] = '\0';
        st = weft__node_parse(bad[i].spec, 0, bad[i].nranks, name, NULL, &err);
        EXPECT(st == WEFT_ERR_CONFIG, "'%s' gave %s", bad[i].spec, weft_strerror(st));
        EXPECT(strstr(err.msg, bad[i].fragment) != NULL, "'%s': message '%s' lacks '%s'",
               bad[i].spec, err.msg, bad[i].fragment);
        EXPECT(strstr(err.msg, "WEFT_TOPO_NODE") != NULL, "'%s': message '%s' names no variable",
               bad[i].spec, err.msg);
    }
    EXPECT(weft__node_parse("a", 1, 1, name, NULL, &err) == WEFT_ERR_INVALID_ARG,
           "rank 1 of 1 accepted");
    EXPECT(weft__node_parse("a", -1, 1, name, NULL, &err) == WEFT_ERR_INVALID_ARG,
           "rank -1 accepted");
}

/* A rank's index on its node, against a count over every lower rank. */
static void test_node_index(void)
{
    static const struct { const char *spec; int nranks; } specs[] = {
        {"a*2,b,a,c.d*3,b*2", 9}, {"x", 1}, {"n1*3,n11*2,n1", 6},
        {"block:node%d:3", 10}, {"cyclic:n%d-x:4", 11}, {"block:n%d1:1", 12},
    };
    char name[WEFT__NODE_NAME_MAX], other[WEFT__NODE_NAME_MAX];
    int  index;

    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        for (int r = 0; r < specs[i].nranks; r++) {
            int count = 0;

            EXPECT(weft__node_parse(specs[i].spec, r, specs[i].nranks, name, &index, &err) ==
                   WEFT_OK, "%s", err.msg);
            for (int q = 0; q < r; q++) {
                EXPECT(weft__node_parse(specs[i].spec, q, specs[i].nranks, other, NULL, &err) ==
                       WEFT_OK, "%s", err.msg);
                count += strcmp(other, name) == 0;
            }
            EXPECT(index == count, "'%s' rank %d: index %d, %d lower ranks on %s",
                   specs[i].spec, r, index, count, name);
        }
    }
    EXPECT(weft__node_parse("a*2,b,a", 3, 4, name, &index, &err) == WEFT_OK, "%s", err.msg);
    EXPECT(index == 2 && strcmp(name, "a") == 0, "a*2,b,a rank 3: %s index %d", name, index);
    EXPECT(weft__node_parse("block:n%d:4", 6, 8, name, &index, &err) == WEFT_OK, "%s", err.msg);
    EXPECT(index == 2 && strcmp(name, "n1") == 0, "block rank 6: %s index %d", name, index);
    index = -1;
    EXPECT(weft__node_parse("a,b", 1, 3, name, &index, &err) == WEFT_ERR_CONFIG,
           "short list accepted");
    EXPECT(index == 0, "index %d after an error", index);
}

int main(void)
{
    test_node_names();
    test_node_errors();
    test_node_index();
    if (failures == 0)
        printf("PASS\n");
    return failures ? 1 : 0;
}
