"""Which sentences to annotate next: the model's uncertainty about each sentence of raw text
(:mod:`.uncertainty`), the ranking and the diversity guard (:mod:`.selection`, pure functions
the lab calls too), and the ``suggest`` command's files (:mod:`.suggestions`)."""
