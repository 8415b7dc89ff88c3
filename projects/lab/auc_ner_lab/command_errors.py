"""How the lab's commands fail: an expected error (the package's, a study's, its results
store's, a missing lab requirement) ends a command with one ``Error:`` line, as in the
package's own command line; anything else is a bug and keeps its traceback."""
import functools

from spacy_auc_ner.api import EXPECTED
from spacy_auc_ner.api import one_line_errors as _package_errors

from .execution import StudyError
from .requirements import MissingRequirement
from .store import StoreError

# the package's expected errors plus the study's, its results store's and a missing lab requirement's
one_line_errors = functools.partial(_package_errors, expected=EXPECTED + (StudyError, StoreError, MissingRequirement))
