from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "kgbweb.accounts"
    label = "kgb_accounts"
    verbose_name = "Accounts"
