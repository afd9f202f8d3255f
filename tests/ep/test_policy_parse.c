/* The policy parser: every name, malformed strings, and random input that
 * must never be accepted by accident or crash it.  No MPI. */
#include <weft.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(cond)                                                        \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                     \
        }                                                                   \
    } while (0)

static void test_good_names(void)
{
    static const struct { const char *s; weft_ep_policy_kind_t kind; unsigned k; } good[] = {
        {"process", WEFT_EP_PROCESS, 1},     {"dedicated-2x", WEFT_EP_DEDICATED_2X, 1},
        {"dedicated", WEFT_EP_DEDICATED, 1}, {"shared:1", WEFT_EP_SHARED, 1},
        {"shared:4", WEFT_EP_SHARED, 4},     {"paired", WEFT_EP_SHARED, 2},
        {"static:3", WEFT_EP_STATIC, 3},     {"static:4096", WEFT_EP_STATIC, 4096},
        {"single", WEFT_EP_SINGLE, 1},       {"shared:007", WEFT_EP_SHARED, 7},
    };

    for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
        weft_ep_policy_t p = {WEFT_EP_SINGLE, 99};

        EXPECT(weft_ep_policy_parse(good[i].s, &p) == WEFT_OK);
        EXPECT(p.kind == good[i].kind && p.k == good[i].k);
    }
}

static void test_malformed(void)
{
    static const char *bad[] = {
        "", "Dedicated", "dedicated ", " dedicated", "dedicated-2", "dedicated-2x ",
        "shared", "shared:", "shared:0", "shared:-1", "shared:+2", "shared: 2", "shared:2 ",
        "shared:2x", "shared:4097", "shared:99999999999999999999", "static", "static:",
        "static:0", "paired:2", "single:1", "process:2", "shared::2", "shared:2:2",
        "SHARED:2", "singl", "singles", "static:1e3", "shared:0x10",
    };
    weft_ep_policy_t p = {WEFT_EP_STATIC, 77};

    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        if (weft_ep_policy_parse(bad[i], &p) != WEFT_ERR_INVALID_ARG)
            fprintf(stderr, "accepted '%s'\n", bad[i]), failures++;
        EXPECT(p.kind == WEFT_EP_STATIC && p.k == 77);  /* untouched */
        EXPECT(strstr(weft_last_error(), "weft_ep_policy_parse") != NULL);
    }
    EXPECT(weft_ep_policy_parse("shared:0", &p) == WEFT_ERR_INVALID_ARG &&
           strstr(weft_last_error(), "1..4096") != NULL);
    EXPECT(weft_ep_policy_parse("bogus", &p) == WEFT_ERR_INVALID_ARG &&
           strstr(weft_last_error(), "'bogus'") != NULL);
    EXPECT(weft_ep_policy_parse(NULL, &p) == WEFT_ERR_INVALID_ARG);
    EXPECT(weft_ep_policy_parse("single", NULL) == WEFT_ERR_INVALID_ARG);
}

/* Random strings over the parser's alphabet: whatever it accepts must
 * print back to the same string in canonical form. */
static void test_fuzz(void)
{
    static const char alphabet[] = "sharedtic:0123456789-2xpognl ";
    char s[16], canon[32];
    unsigned seed = 12345;

    for (int it = 0; it < 200000; it++) {
        size_t len = (size_t)(rand_r(&seed) % 14);
        weft_ep_policy_t p;

        for (size_t i = 0; i < len; i++)
            s[i] = alphabet[(size_t)rand_r(&seed) % (sizeof(alphabet) - 1)];
        s[len] = '\0';
        if (it % 3 == 0 && len >= 7)  /* bias towards the prefixes */
            memcpy(s, it % 2 ? "shared:" : "static:", 7);
        if (weft_ep_policy_parse(s, &p) != WEFT_OK)
            continue;
        switch (p.kind) {
        case WEFT_EP_SHARED:
        case WEFT_EP_STATIC:
            EXPECT(p.k >= 1 && p.k <= 4096);
            snprintf(canon, sizeof(canon), "%s:%u", p.kind == WEFT_EP_SHARED ? "shared" : "static",
                     p.k);
            if (strcmp(s, "paired") != 0 && strtoul(strchr(s, ':') + 1, NULL, 10) != p.k)
                fprintf(stderr, "'%s' parsed as %s\n", s, canon), failures++;
            break;
        default:
            EXPECT(strchr(s, ':') == NULL && strchr(s, ' ') == NULL);
        }
    }
}

int main(void)
{
    test_good_names();
    test_malformed();
    test_fuzz();
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    else
        printf("policy parser: every name, the malformed forms and 200000 random strings: ok\n");
    return failures != 0;
}
