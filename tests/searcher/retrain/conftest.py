"""What the retraining tests share: a small campaign of gender-cnn's failures and a user's own recipe."""

from dataclasses import dataclass, field

import pytest
from sklearn.linear_model import LogisticRegression

from targets.trained import GenderCNN


@pytest.fixture(scope="module")
def hard(stored_campaign):
    """150 random evaluations of gender-cnn on 64 px faces: about 70 failures."""
    return stored_campaign("search", generator="faces", target="gender-cnn", strategy="random", budget=150, batch=50, seed=0,
                           generator_options={"resolution": 64})


@dataclass
class PixelRecipe:
    """A user's own model: logistic regression on 16 x 16 grey pixels, on the shipped recipe's data
    (shrunk). It records what every training run was given."""

    shipped: object = field(default_factory=lambda: GenderCNN().recipe(n=400, test_n=200))
    seen: list = field(default_factory=list)
    predictions: list = field(default_factory=list)

    @property
    def labels(self):
        return self.shipped.labels

    def base(self, seed):
        return self.shipped.base(seed)

    def balanced(self, seed):
        return self.shipped.balanced(seed)

    def tests(self, seed=1):
        return self.shipped.tests(seed)

    def groups(self, truth):
        return self.shipped.groups(truth)

    @staticmethod
    def _features(images):
        grey = images.mean(axis=3)
        h, w = grey.shape[1:]
        return grey.reshape(len(images), 16, h // 16, 16, w // 16).mean(axis=(2, 4)).reshape(len(images), -1) / 255.0

    def train(self, data, seed):
        self.seen.append((seed, data))
        return LogisticRegression(max_iter=300, C=0.1, random_state=seed).fit(self._features(data.images), data.labels)

    def evaluate(self, model, data):
        pred = model.predict(self._features(data.images))
        self.predictions.append((data, pred))
        return pred


@pytest.fixture
def pixel_recipe():
    """`PixelRecipe`, to build one per test: `pixel_recipe()`."""
    return PixelRecipe
