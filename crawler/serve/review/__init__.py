"""Review: the records whose annotation needs a person's look, and the folder's validity.

This subpackage owns what `crawler check` and `crawler validate` read off a finished output
folder (`checks`): annotations whose `written_for` is not their record's current template,
records waiting in `needs_review`, annotations left on `removed` records with the live records
most like them (`crawler.catalogue.successors`, for `crawler adopt`), and annotations that fit
another record better than their own (`annotation_fit`: one rule over every record's facts,
`Index`; the names and words an annotation mentions, its code read as code, `annotation_names`;
each record's facts and each annotation's mentions kept between runs in the cache database,
`fact_cache`; docs/annotations.md), sure or suspect. It writes nothing but the dismissals a person asks for
(`checks.dismiss`, into `crawler.store.dismissals`): a review is cleared by a person, and the
next run reads it.

The contract, in one example. A module's three messages were annotated (each `written_for`
its template); then one was reworded and one removed, and `crawler update` ran. `check` lists
the two annotations that need a person, one line each (wrapped here after the file's name, and
the last line), and exits 1:

    $ crawler check out
    out/local/acme/lib/errors/90467943a1b39c99.yaml:
     needs_review: annotation written for 'unknown mode {mode}', the message is now 'unknown file mode {mode}'
    out/local/acme/lib/errors/6c11530da22d271d.yaml:
     removed, with an annotation (written for 'cannot load it'); no candidate (none scores 0.25 or more)
    3 records checked, 1 to review, 1 orphaned annotations, 0 annotations that do not fit
    (0 sure, 0 suspect, 0 dismissed), 0 unreadable

The record that only moved (the same message on another line) is not listed: its annotation
still names its template. Setting `annotation.written_for` of the first to `unknown file mode
{mode}` clears it at the next run (`crawler.catalogue.merge.clear_review`).
"""
