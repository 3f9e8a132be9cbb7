/* SPDX-License-Identifier: BSD-3-Clause */
/* Copyright (c) 2026 pvrdma-mpi developers */
/**
 * @file port_list.c
 * @brief Parsing and matching of include/exclude lists "dev[:port],...".
 */
#ifdef HAVE_CONFIG_H
#include "pvrdma_config.h"
#endif
#include "pvrdma_port.h"
#include "pvrdma_errmsg.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Parse one element [begin, end) with blanks already trimmed. */
static int parse_element(const char *begin, const char *end,
                         struct pvrdma_common_port_spec *spec,
                         char *err, size_t err_len)
{
    const char *colon = memchr(begin, ':', (size_t)(end - begin));
    const char *name_end = (colon != NULL) ? colon : end;
    size_t name_len = (size_t)(name_end - begin);
    unsigned long port = PVRDMA_COMMON_PORT_ANY;

    if (name_len == 0) {
        pvrdma_errmsg_set(err, err_len, "empty device name in '%.*s'",
                (int)(end - begin), begin);
        return EINVAL;
    }
    if (name_len >= sizeof(spec->dev_name)) {
        pvrdma_errmsg_set(err, err_len, "device name '%.*s' is too long (max %zu)",
                (int)name_len, begin, sizeof(spec->dev_name) - 1);
        return EINVAL;
    }

    if (colon != NULL) {
        const char *p = colon + 1;

        if (p == end) {
            pvrdma_errmsg_set(err, err_len, "missing port number after ':' in '%.*s'",
                    (int)(end - begin), begin);
            return EINVAL;
        }
        port = 0;
        for (; p < end; ++p) {
            if (!isdigit((unsigned char)*p)) {
                pvrdma_errmsg_set(err, err_len, "port '%.*s' in '%.*s' is not a number",
                        (int)(end - colon - 1), colon + 1,
                        (int)(end - begin), begin);
                return EINVAL;
            }
            port = port * 10 + (unsigned long)(*p - '0');
            if (port > 255) {
                break;
            }
        }
        if ((port < 1) || (port > 255)) {
            pvrdma_errmsg_set(err, err_len, "port '%.*s' in '%.*s' is out of range 1..255",
                    (int)(end - colon - 1), colon + 1,
                    (int)(end - begin), begin);
            return EINVAL;
        }
    }

    memcpy(spec->dev_name, begin, name_len);
    spec->dev_name[name_len] = '\0';
    spec->port_num = (uint8_t)port;
    return 0;
}

int pvrdma_common_port_list_parse(const char *str,
                                  struct pvrdma_common_port_list *list,
                                  char *err, size_t err_len)
{
    const char *p;
    size_t max_elems = 1;
    int rc;

    if (list == NULL) {
        pvrdma_errmsg_set(err, err_len, "internal error: no list");
        return EINVAL;
    }
    list->specs = NULL;
    list->count = 0;
    pvrdma_errmsg_set(err, err_len, "%s", "");

    if (str == NULL) {
        return 0;
    }
    for (p = str; isspace((unsigned char)*p); ++p) {
    }
    if (*p == '\0') {
        return 0;
    }

    for (p = str; *p != '\0'; ++p) {
        max_elems += (*p == ',');
    }
    list->specs = calloc(max_elems, sizeof(*list->specs));
    if (list->specs == NULL) {
        pvrdma_errmsg_set(err, err_len, "out of memory");
        return ENOMEM;
    }

    p = str;
    for (;;) {
        const char *comma = strchr(p, ',');
        const char *end = (comma != NULL) ? comma : p + strlen(p);
        const char *b = p, *e = end;

        while ((b < e) && isspace((unsigned char)*b)) {
            ++b;
        }
        while ((e > b) && isspace((unsigned char)e[-1])) {
            --e;
        }
        if (b == e) {
            pvrdma_errmsg_set(err, err_len, "empty element in list '%s'", str);
            rc = EINVAL;
            goto err_free;
        }
        rc = parse_element(b, e, &list->specs[list->count], err, err_len);
        if (rc != 0) {
            goto err_free;
        }
        ++list->count;
        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }
    return 0;

err_free:
    pvrdma_common_port_list_free(list);
    return rc;
}

void pvrdma_common_port_list_free(struct pvrdma_common_port_list *list)
{
    if (list == NULL) {
        return;
    }
    free(list->specs);
    list->specs = NULL;
    list->count = 0;
}

bool pvrdma_common_port_list_match(const struct pvrdma_common_port_list *list,
                                   const char *dev_name, uint8_t port_num)
{
    size_t i;

    if ((list == NULL) || (dev_name == NULL)) {
        return false;
    }
    for (i = 0; i < list->count; ++i) {
        const struct pvrdma_common_port_spec *s = &list->specs[i];

        if ((strcmp(s->dev_name, dev_name) == 0) &&
            ((s->port_num == PVRDMA_COMMON_PORT_ANY) ||
             (s->port_num == port_num))) {
            return true;
        }
    }
    return false;
}

bool pvrdma_common_port_selected(const struct pvrdma_common_port_list *include,
                                 const struct pvrdma_common_port_list *exclude,
                                 const char *dev_name, uint8_t port_num)
{
    if ((include != NULL) && (include->count > 0) &&
        !pvrdma_common_port_list_match(include, dev_name, port_num)) {
        return false;
    }
    return !pvrdma_common_port_list_match(exclude, dev_name, port_num);
}
