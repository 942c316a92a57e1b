from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0003_workspace_membership'),
        ('memories', '0013_scope_index_importance'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='memoryitem',
            name='mem_ws_scope',
        ),
        migrations.AddIndex(
            model_name='memoryitem',
            index=models.Index(fields=['workspace', 'scope', 'scope_id', 'lifecycle_status', 'importance', 'created_at'], name='mem_ws_scope_importance'),
        ),
    ]
